"""Selection rules: which verified completions a curated dataset keeps.

A rule is plain JSON (stored on the Selection, so a dataset says how it was made):

- ``{"rule": "tau", "tau": 0.6}``: pass fraction >= tau (the paper's V(s; T) >= tau), compared
  exactly as fractions, so 3 of 5 tests passes tau = 0.6;
- ``{"rule": "first_k", "k": 2}``: every one of the suite's first k tests (by ordinal) passes;
- ``{"rule": "kind", "kind": "hacking"}``: every test of that kind passes (none of it: not kept);
- ``{"rule": "origin", "origin": "public"}``: every test of the active suite of that origin passes;
- ``{"rule": "judge", "judge": "gpt-4o", "threshold": 7}``: the judge's score (0-10) >= threshold;
- ``{"rule": "and" | "or", "rules": [...]}``: a combination.

The short text form (``tau>=0.6``, ``first:2``, ``kind:hacking``, ``origin:public``,
``judge:gpt-4o>=7``, joined by ``&`` or ``|``, not mixed) is what the command and the page take.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

TAU_GRID = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)


class RuleError(ValueError):
    pass


@dataclass(frozen=True)
class Facts:
    """What a rule reads of one verified completion."""

    passed: int
    total: int
    primary_origin: str
    # origin -> {"passed", "total", "tests": [[ordinal, kind, verdict], ...]}
    results: dict[str, dict[str, Any]]
    scores: dict[str, float | None] = field(default_factory=dict)


def _primary_tests(facts: Facts) -> list[list[Any]]:
    return list((facts.results.get(facts.primary_origin) or {}).get("tests") or [])


def keeps(rule: dict[str, Any], facts: Facts) -> bool:
    kind = rule.get("rule")
    if kind == "tau":
        if facts.total <= 0:
            return False  # nothing was checked: nothing to keep it for
        return Fraction(facts.passed, facts.total) >= Fraction(str(rule["tau"]))
    if kind == "first_k":
        tests = sorted(_primary_tests(facts), key=lambda t: t[0])[: int(rule["k"])]
        return bool(tests) and all(t[2] == "AC" for t in tests)
    if kind == "kind":
        tests = [t for t in _primary_tests(facts) if t[1] == rule["kind"]]
        return bool(tests) and all(t[2] == "AC" for t in tests)
    if kind == "origin":
        result = facts.results.get(str(rule["origin"]))
        return bool(result and result["total"] > 0 and result["passed"] == result["total"])
    if kind == "judge":
        score = facts.scores.get(str(rule["judge"]))
        return score is not None and score >= float(rule["threshold"])
    if kind == "and":
        return all(keeps(r, facts) for r in rule["rules"])
    if kind == "or":
        return any(keeps(r, facts) for r in rule["rules"])
    raise RuleError(f"unknown rule {kind!r}")


def judges_of(rule: dict[str, Any]) -> list[str]:
    if rule.get("rule") == "judge":
        return [str(rule["judge"])]
    return [j for r in rule.get("rules", []) for j in judges_of(r)]


def origins_of(rule: dict[str, Any]) -> list[str]:
    if rule.get("rule") == "origin":
        return [str(rule["origin"])]
    return [o for r in rule.get("rules", []) for o in origins_of(r)]


_NUMBER = r"(\d+(?:\.\d+)?|\.\d+)"
_ATOMS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], dict[str, Any]]]] = [
    (re.compile(rf"^tau\s*>=\s*{_NUMBER}$"), lambda m: {"rule": "tau", "tau": float(m.group(1))}),
    (re.compile(r"^first[:=]\s*(\d+)$"), lambda m: {"rule": "first_k", "k": int(m.group(1))}),
    (re.compile(r"^kind[:=]\s*([a-z_]+)$"), lambda m: {"rule": "kind", "kind": m.group(1)}),
    (re.compile(r"^origin[:=]\s*([a-z_]+)$"), lambda m: {"rule": "origin", "origin": m.group(1)}),
    (re.compile(rf"^judge[:=]\s*(\S+?)\s*>=\s*{_NUMBER}$"),
     lambda m: {"rule": "judge", "judge": m.group(1), "threshold": float(m.group(2))}),
]


def rule_parse(text: str) -> dict[str, Any]:
    """The JSON rule for its text form; RuleError names what is wrong."""
    text = text.strip()
    if not text:
        raise RuleError("empty rule")
    if "&" in text and "|" in text:
        raise RuleError("mixing & and | is ambiguous: use the JSON form")
    for joiner, name in (("&", "and"), ("|", "or")):
        if joiner in text:
            return rule_check({"rule": name, "rules": [rule_parse(part) for part in text.split(joiner)]})
    for pattern, build in _ATOMS:
        match = pattern.match(text)
        if match:
            return rule_check(build(match))
    raise RuleError(f"cannot read the rule {text!r}: use tau>=X, first:K, kind:NAME, origin:NAME or "
                    "judge:MODEL>=SCORE, joined by & or |")


def rule_check(rule: Any) -> dict[str, Any]:
    """A rule in JSON form, checked (ranges, known kinds); returned as given."""
    if not isinstance(rule, dict):
        raise RuleError("a rule is a JSON object")
    kind = rule.get("rule")
    if kind == "tau":
        tau = rule.get("tau")
        if not isinstance(tau, int | float) or not 0 < float(tau) <= 1:
            raise RuleError("tau must be in (0, 1]")
    elif kind == "first_k":
        if not isinstance(rule.get("k"), int) or rule["k"] < 1:
            raise RuleError("k must be a positive integer")
    elif kind in ("kind", "origin"):
        if not isinstance(rule.get(kind), str) or not rule[kind]:
            raise RuleError(f"{kind} must be named")
    elif kind == "judge":
        if not isinstance(rule.get("judge"), str) or not isinstance(rule.get("threshold"), int | float):
            raise RuleError("a judge rule names the judge and a threshold")
    elif kind in ("and", "or"):
        parts = rule.get("rules")
        if not isinstance(parts, list) or len(parts) < 2:
            raise RuleError(f"{kind} combines at least two rules")
        for part in parts:
            rule_check(part)
    else:
        raise RuleError(f"unknown rule {kind!r}")
    return rule


def rule_label(rule: dict[str, Any]) -> str:
    kind = rule["rule"]
    if kind == "tau":
        return f"tau>={float(rule['tau']):g}"
    if kind == "first_k":
        return f"first:{rule['k']}"
    if kind in ("kind", "origin"):
        return f"{kind}:{rule[kind]}"
    if kind == "judge":
        return f"judge:{rule['judge']}>={float(rule['threshold']):g}"
    joiner = " & " if kind == "and" else " | "
    return joiner.join(rule_label(r) for r in rule["rules"])
