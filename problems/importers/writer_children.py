"""Bulk writes of what hangs off a problem: aliases, tags, labels, solutions, kits and suites.

Each function takes every target of a segment and issues a fixed number of queries. A target
in ``merge`` mode (a mirror) only adds what the problem lacks; otherwise the row is the
problem's own record and replaces what differs, never rewriting what is already equal, so
re-importing a file changes nothing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from django.db.models import Max
from django.utils import timezone

from problems.blobs import blob_sha256, preview
from problems.importers.blobstore import blobs_store
from problems.importers.fastinsert import fast_insert
from problems.importers.native import NativeRow
from problems.models import (
    DifficultyLabel,
    InputValidator,
    OutputJudge,
    Problem,
    ProblemAlias,
    Solution,
    Tag,
    TestCase,
    TestKit,
    TestSuite,
)
from problems.services import code_sha256

_BATCH = 500


@dataclass
class Target:
    index: int
    problem: Any  # a Problem, or a namespace with its fields for one created in this chunk
    parsed: NativeRow
    merge: bool
    status: str
    changes: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def changed(self, key: str, n: int = 1) -> None:
        if n:
            self.changes += n
            self.counts[key] += n


def _ids(targets: Iterable[Target], *, existing_only: bool = True) -> set[int]:
    return {t.problem.pk for t in targets if not (existing_only and t.status == "created")}


def aliases_write(targets: list[Target]) -> None:
    wanted: dict[tuple[str, str], tuple[Target, str]] = {}
    for t in targets:
        data = t.parsed.data
        if t.merge:
            wanted[(data["source"], data["pid"])] = (t, data["url"][:500])
        for alias in t.parsed.aliases:
            if (alias["source"], alias["pid"]) != (t.problem.source, t.problem.pid):
                wanted[(alias["source"], alias["pid"])] = (t, alias["url"])
    if not wanted:
        return
    existing = {
        (a.source, a.pid): a
        for a in ProblemAlias.objects.filter(source__in={s for s, _ in wanted}, pid__in={p for _, p in wanted})
    }
    create: list[ProblemAlias] = []
    update: list[ProblemAlias] = []
    for (source, pid), (t, url) in wanted.items():
        current = existing.get((source, pid))
        if current is None:
            create.append(ProblemAlias(problem_id=t.problem.pk, source=source, pid=pid, url=url))
        elif current.problem_id != t.problem.pk or current.url != url:
            current.problem_id, current.url = t.problem.pk, url
            update.append(current)
        else:
            continue
        t.changed("aliases")
    ProblemAlias.objects.bulk_create(create, batch_size=_BATCH)
    ProblemAlias.objects.bulk_update(update, ["problem", "url"], batch_size=_BATCH)


def tags_write(targets: list[Target]) -> None:
    # Tags only accumulate: a problem merged from several datasets carries each one's tags,
    # and re-importing one dataset must not take away what another added.
    names = {name for t in targets for name in t.parsed.data["tags"]}
    through = Problem.tags.through
    have: dict[int, dict[int, int]] = defaultdict(dict)  # problem -> tag -> link id
    ids = _ids(targets)
    if ids:
        for link_id, problem_id, tag_id in through.objects.filter(problem_id__in=ids).values_list(
            "id", "problem_id", "tag_id"
        ):
            have[problem_id][tag_id] = link_id
    tag_ids: dict[str, int] = {}
    if names:
        tag_ids = dict(Tag.objects.filter(name__in=names).values_list("name", "id"))
        missing = names - tag_ids.keys()
        if missing:
            Tag.objects.bulk_create([Tag(name=n) for n in sorted(missing)], ignore_conflicts=True)
            tag_ids.update(Tag.objects.filter(name__in=missing).values_list("name", "id"))
    add: list[dict[str, Any]] = []
    for t in targets:
        wanted = {tag_ids[n] for n in t.parsed.data["tags"]}
        current = have[t.problem.pk]
        new = wanted - current.keys()
        add.extend({"problem_id": t.problem.pk, "tag_id": tag} for tag in sorted(new))
        current.update(dict.fromkeys(new, 0))
        t.changed("tags", len(new))
    fast_insert(through, add)


def difficulty_write(targets: list[Target]) -> None:
    ids = _ids(targets)
    existing = {(d.problem_id, d.source): d for d in DifficultyLabel.objects.filter(problem_id__in=ids)} if ids else {}
    create, update = [], []
    for t in targets:
        for label in t.parsed.data["difficulty"]:
            current = existing.get((t.problem.pk, label["source"]))
            if current is None:
                create.append({"problem_id": t.problem.pk, **label})
            elif not t.merge and (current.level, current.score) != (label["level"], label["score"]):
                current.level, current.score = label["level"], label["score"]
                update.append(current)
            else:
                continue
            t.changed("difficulty_labels")
    fast_insert(DifficultyLabel, create)
    DifficultyLabel.objects.bulk_update(update, ["level", "score"], batch_size=_BATCH)


def _rank(reliability: int | None) -> int:
    return 1_000_000 if reliability is None else reliability


_SOLUTION_FIELDS = ("language", "source", "reliability", "gold_verdict", "origin", "name", "note")


def solutions_write(targets: list[Target]) -> None:
    ids = _ids(targets)
    existing: dict[tuple[int, str, str], Any] = {}
    if ids:
        for sol in Solution.objects.filter(problem_id__in=ids).defer("code"):
            existing[(sol.problem_id, sol.role, sol.code_sha256)] = sol
    create: list[dict[str, Any]] = []
    update: dict[int, Solution] = {}
    for t in targets:
        for sol in t.parsed.data["solutions"]:
            sha = code_sha256(sol["code"])
            key = (t.problem.pk, sol["role"], sha)
            current = existing.get(key)
            if current is None:
                row = {"problem_id": t.problem.pk, "code_sha256": sha, **sol}
                existing[key] = SimpleNamespace(pk=None, **row)  # a later duplicate in the chunk compares to it
                create.append(row)
                t.changed("solutions")
                continue
            # The same code from two sources is one solution; the more reliable source names it,
            # and a row may always restate its own source's solution.
            own_source = not t.merge and current.source == sol["source"]
            if not (own_source or _rank(sol["reliability"]) < _rank(current.reliability)):
                # Kept under the more reliable source; the other source is remembered in the note.
                also = f"also in {sol['source']}"
                if sol["source"] and sol["source"] != current.source and also not in current.note \
                        and current.pk is not None and len(current.note) + len(also) + 2 <= 500:
                    current.note = f"{current.note}; {also}" if current.note else also
                    update[current.pk] = current
                    t.changed("solutions_updated")
                continue
            wanted = {**sol, "note": _note_merge(sol["note"], current.note)}
            if any(getattr(current, f) != wanted[f] for f in _SOLUTION_FIELDS):
                for f in _SOLUTION_FIELDS:
                    setattr(current, f, wanted[f])
                if current.pk is not None:
                    update[current.pk] = current
                t.changed("solutions_updated")
    fast_insert(Solution, create)
    Solution.objects.bulk_update(list(update.values()), list(_SOLUTION_FIELDS), batch_size=_BATCH)


def _note_merge(incoming: str, current: str) -> str:
    """The row's note, keeping the "also in <source>" marks that merges added."""
    marks = [part for part in current.split("; ") if part.startswith("also in ") and part not in incoming]
    return "; ".join(p for p in (incoming, *marks) if p)[:500]


def _max_versions(model: type[InputValidator | OutputJudge | TestKit | TestSuite],
                  ids: set[int]) -> dict[int, int]:
    if not ids:
        return {}
    rows = model.objects.filter(problem_id__in=ids).values("problem_id").annotate(m=Max("version"))
    return {r["problem_id"]: r["m"] for r in rows}


def _kit_signature(kit: TestKit | None) -> tuple[Any, ...] | None:
    if kit is None:
        return None
    return (
        kit.validator.code if kit.validator else "",
        kit.output_judge.code if kit.output_judge else "",
        kit.needs_output_judge, kit.direct_inputs, kit.regular_generator, kit.hacking_generator,
        kit.batch_generator, kit.extra, kit.origin, kit.model_name,
    )


def _parsed_kit_signature(kit: dict[str, Any]) -> tuple[Any, ...]:
    return (
        kit["input_validator"], kit["output_judging_function"],
        kit["needs_custom_output_judging_function"] or bool(kit["output_judging_function"]),
        kit["LLMGen_input"], kit["RPGen_SPGen_input_generator"], kit["HackGen_input_generator"],
        kit["batch_generator"], kit["extra"], kit["origin"], kit["model"],
    )


def kits_write(targets: list[Target]) -> None:
    with_kit = [t for t in targets if t.parsed.kit is not None]
    if not with_kit:
        return
    ids = _ids(with_kit)
    latest: dict[int, TestKit] = {}
    regression: dict[int, list[Any]] = {}
    if ids:
        for test_kit in TestKit.objects.filter(problem_id__in=ids).select_related(
            "validator", "output_judge"
        ).order_by("problem_id", "-version"):
            latest.setdefault(test_kit.problem_id, test_kit)
        for v in InputValidator.objects.filter(problem_id__in=ids).order_by("problem_id", "-version").only(
            "problem_id", "regression_inputs"
        ):
            regression.setdefault(v.problem_id, v.regression_inputs)
    versions = {m: _max_versions(m, ids) for m in (InputValidator, OutputJudge, TestKit)}
    planned: list[tuple[Target, dict[str, Any], InputValidator | None, OutputJudge | None]] = []
    done: set[int] = set()
    for t in with_kit:
        pk = t.problem.pk
        current = latest.get(pk)
        if pk in done or (t.merge and current is not None):
            continue
        kit = t.parsed.kit
        assert kit is not None  # with_kit holds only targets with a kit
        if _kit_signature(current) == _parsed_kit_signature(kit):
            continue
        common = {"problem_id": pk, "origin": kit["origin"], "model_name": kit["model"]}
        validator = judge = None
        if kit["input_validator"]:
            version = versions[InputValidator][pk] = versions[InputValidator].get(pk, 0) + 1
            validator = InputValidator(version=version, code=kit["input_validator"],
                                       regression_inputs=list(regression.get(pk, [])), **common)
        if kit["output_judging_function"]:
            version = versions[OutputJudge][pk] = versions[OutputJudge].get(pk, 0) + 1
            judge = OutputJudge(version=version, code=kit["output_judging_function"], **common)
        planned.append((t, kit, validator, judge))
        done.add(pk)
    InputValidator.objects.bulk_create([v for _, _, v, _ in planned if v], batch_size=_BATCH)
    OutputJudge.objects.bulk_create([j for _, _, _, j in planned if j], batch_size=_BATCH)
    kits = []
    for t, kit, validator, judge in planned:
        pk = t.problem.pk
        version = versions[TestKit][pk] = versions[TestKit].get(pk, 0) + 1
        kits.append(TestKit(
            problem_id=pk, version=version, origin=kit["origin"], model_name=kit["model"],
            validator=validator, output_judge=judge,
            needs_output_judge=kit["needs_custom_output_judging_function"] or judge is not None,
            direct_inputs=kit["LLMGen_input"], regular_generator=kit["RPGen_SPGen_input_generator"],
            hacking_generator=kit["HackGen_input_generator"], batch_generator=kit["batch_generator"],
            extra=kit["extra"],
        ))
        t.changed("kits")
    TestKit.objects.bulk_create(kits, batch_size=_BATCH)


def _test_signature(tests: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(blob_sha256(t["input"]), blob_sha256(t["output"]), t["kind"], t["generator"], t["call_number"])
            for t in tests]


def suites_write(targets: list[Target]) -> None:
    with_suites = [t for t in targets if t.parsed.suites]
    if not with_suites:
        return
    ids = _ids(with_suites)
    active: dict[tuple[int, str], TestSuite] = {}
    if ids:
        for suite in TestSuite.objects.filter(problem_id__in=ids, status=TestSuite.Status.ACTIVE):
            active[(suite.problem_id, suite.origin)] = suite
    compare = {
        s.pk for t in with_suites if not t.merge for d in t.parsed.suites
        if (s := active.get((t.problem.pk, d["origin"]))) is not None
    }
    existing_tests: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    if compare:
        for row in TestCase.objects.filter(suite_id__in=compare).order_by("suite_id", "ordinal").values_list(
            "suite_id", "input_sha256", "output_sha256", "kind", "generator", "call_number"
        ):
            existing_tests[row[0]].append(row[1:])
    versions = _max_versions(TestSuite, ids)
    now = timezone.now()
    planned: list[tuple[Target, TestSuite, list[dict[str, Any]]]] = []
    superseded: list[int] = []
    for t in with_suites:
        pk = t.problem.pk
        for suite_data in t.parsed.suites:
            current = active.get((pk, suite_data["origin"]))
            if current is not None and (t.merge or existing_tests[current.pk] == _test_signature(suite_data["tests"])):
                continue
            if current is not None:
                superseded.append(current.pk)
            version = versions[pk] = versions.get(pk, 0) + 1
            counts = Counter(test["kind"] for test in suite_data["tests"])
            suite = TestSuite(
                problem_id=pk, version=version, status=TestSuite.Status.ACTIVE, origin=suite_data["origin"],
                test_count=len(suite_data["tests"]), counts_by_kind=dict(sorted(counts.items())),
                total_bytes=sum(len(_bytes(x["input"])) + len(_bytes(x["output"])) for x in suite_data["tests"]),
                note=f"imported from {t.parsed.data['source']}:{t.parsed.data['pid']}"[:500], activated_at=now,
                unverified=bool(suite_data.get("unverified")), trust=suite_data.get("trust") or {},
            )
            active[(pk, suite_data["origin"])] = suite
            planned.append((t, suite, suite_data["tests"]))
            t.changed("suites")
            t.counts["tests"] += len(suite_data["tests"])
    if not planned:
        return
    # The partial unique index allows one active suite per origin: retire the old ones first.
    TestSuite.objects.filter(pk__in=superseded).update(status=TestSuite.Status.SUPERSEDED)
    fast_insert(TestSuite, [s for _, s, _ in planned])
    suite_ids = {(p, o): pk for p, o, pk in TestSuite.objects.filter(
        problem_id__in={s.problem_id for _, s, _ in planned}, status=TestSuite.Status.ACTIVE,
    ).values_list("problem_id", "origin", "id")}
    for _, suite, _ in planned:
        suite.pk = suite_ids[(suite.problem_id, suite.origin)]
        suite._state.adding = False
    bodies = [_bytes(body) for _, _, tests in planned for test in tests for body in (test["input"], test["output"])]
    stored = iter(blobs_store(bodies))
    rows = []
    for _, suite, tests in planned:
        for ordinal, test in enumerate(tests):
            in_sha, in_size = next(stored)
            out_sha, out_size = next(stored)
            rows.append({
                "suite_id": suite.pk, "ordinal": ordinal, "kind": test["kind"], "generator": test["generator"],
                "call_number": test["call_number"], "input_sha256": in_sha, "input_size": in_size,
                "input_preview": preview(test["input"], TestCase.PREVIEW_CHARS), "output_sha256": out_sha,
                "output_size": out_size, "output_preview": preview(test["output"], TestCase.PREVIEW_CHARS),
                "output_origin": test.get("output_origin", ""),
            })
    fast_insert(TestCase, rows)


def _bytes(body: str | bytes) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body
