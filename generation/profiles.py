"""Generation profiles: how much the LLM sees when it writes a suite's inputs (call 2).

The verification-limits study builds suites of rising complexity for the same problems:
Minimal (the statement only), Structured (the statement, one candidate solution and a few given
tests) and Contrastive (the statement, a correct and an incorrect solution: inputs that tell
them apart). HardTestGen (the default) is the project's own call 2: direct inputs plus regular,
stratified and hacking generators, from the statement, an oracle and the validator.

Each profile is a versioned prompt file; the reply has call 2's keys, so parsing, validation,
outputs from oracles and the suite are the same for every profile. Call 1 (the validator) is
shared. A run's profile is GenerationRun.profile, chosen when the run starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generation import prompting
from generation.prompting import _messages as render_prompt  # the one renderer of prompt files
from problems.models import SUPPORTED_LANGUAGES, Solution

_MAX_CODE_CHARS = 30_000


@dataclass(frozen=True)
class Profile:
    name: str
    label: str
    prompt: str | None  # None: HardTestGen's own call 2 (prompting.INPUTS_PROMPT)
    sees: str


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("hardtestgen", "HardTestGen", None, "statement, oracle, validator -> direct inputs + generators"),
    Profile("minimal", "Minimal", "minimal_v1", "statement only -> direct inputs"),
    Profile("structured", "Structured", "structured_v1", "statement, a candidate solution, given tests -> direct inputs"),
    Profile("contrastive", "Contrastive", "contrastive_v1",
            "statement, a correct and an incorrect solution -> inputs that tell them apart"),
)}
DEFAULT_PROFILE = "hardtestgen"


class ProfileUnusable(ValueError):
    """The problem lacks what the profile shows the model (e.g. no incorrect solution)."""


def profile_get(name: str | None) -> Profile:
    profile = PROFILES.get(name or DEFAULT_PROFILE)
    if profile is None:
        raise ValueError(f"unknown generation profile {name!r}; choose one of {', '.join(PROFILES)}")
    return profile


def _runnable(solutions: Any) -> list[Solution]:
    return [s for s in solutions if s.language in SUPPORTED_LANGUAGES]


def inputs_messages(*, profile_name: str | None, problem: Any, common: dict[str, Any], validator_code: str,
                    direct_count: int) -> tuple[str, list[dict[str, str]]]:
    """(prompt version, messages) of call 2 under the run's profile."""
    profile = profile_get(profile_name)
    if profile.prompt is None:
        return prompting.INPUTS_PROMPT, prompting.inputs_prompt(**common, validator_code=validator_code,
                                                                 direct_count=direct_count)
    values: dict[str, Any] = {
        "statement": str(common["statement"]).strip(), "samples": prompting._samples_text(common["samples"]),
        "time_limit_ms": common["time_limit_ms"], "memory_limit_mb": common["memory_limit_mb"],
        "direct_count": direct_count,
    }
    candidates = problem.solutions.filter(role=Solution.Role.CANDIDATE).order_by("id")
    if profile.name == "structured":
        # One candidate as the model would meet it: any candidate (right or wrong), else the oracle.
        runnable = _runnable(candidates)
        shown = runnable[0] if runnable else None
        language, code = (shown.language, shown.code) if shown else (common["oracle_language"], common["oracle_code"])
        values.update(candidate_language=language, candidate_code=code[:_MAX_CODE_CHARS].rstrip())
    elif profile.name == "contrastive":
        wrong = _runnable(candidates.exclude(gold_verdict__in=[Solution.GoldVerdict.AC, Solution.GoldVerdict.UNKNOWN]))
        if not wrong:
            raise ProfileUnusable("the contrastive profile needs an incorrect solution (a candidate with a "
                                  "failing gold verdict); this problem has none")
        values.update(correct_language=common["oracle_language"],
                      correct_code=str(common["oracle_code"])[:_MAX_CODE_CHARS].rstrip(),
                      incorrect_language=wrong[0].language, incorrect_code=wrong[0].code[:_MAX_CODE_CHARS].rstrip())
    return profile.prompt, render_prompt(profile.prompt, values)
