"""The one write path of every import: a chunk of parsed rows upserted with a few bulk queries.

Per chunk the cost is a fixed number of queries (look-ups by key, bulk inserts, bulk
updates), not a number per row, which is what makes 50,000 problems take a minute rather than
an hour. Rows are resolved first:

- ``own``: the row's (source, pid) is a Problem: its fields are rewritten where they differ.
- ``new``: nothing matches: a new Problem.
- ``merge``: the row is a mirror of a known problem (its (source, pid) is an alias, or its
  platform id matches a problem from another dataset): it becomes a ProblemAlias and adds
  what the known problem lacks (solutions with their sources, labels, tags, a kit, suites).
- ``promote``: the row is the original platform's record of a problem first seen on a mirror:
  it takes over the problem's identity and fields, and the mirror becomes the alias.

Rows of one chunk that share a key are written in separate segments, in order, so a later row
sees what an earlier one wrote.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeVar

from django.db import transaction

from problems.importers.fastinsert import fast_insert
from problems.importers.identity import is_original, platform_id_from_url
from problems.importers.native import NativeRow
from problems.importers.writer_children import (
    Target,
    aliases_write,
    difficulty_write,
    kits_write,
    solutions_write,
    suites_write,
    tags_write,
)
from problems.models import Problem, ProblemAlias

_Keyed = TypeVar("_Keyed", Problem, ProblemAlias)

_FIELDS = ("title", "statement", "platform", "platform_id", "url", "comparison", "time_limit_ms",
           "memory_limit_mb", "contest_date", "samples", "extra")


@dataclass
class RowOutcome:
    status: str  # created, updated, unchanged, merged
    problem_id: int
    source: str
    pid: str
    counts: dict[str, int] = field(default_factory=dict)


def native_row_write(parsed: NativeRow) -> tuple[Problem, bool]:
    """Upsert one parsed row by (source, pid). Idempotent: re-importing changes nothing."""
    outcome = rows_write([parsed])[0]
    return Problem.objects.get(pk=outcome.problem_id), outcome.status == "created"


def _key(parsed: NativeRow) -> tuple[str, str]:
    return parsed.data["source"], parsed.data["pid"]


def _segments(rows: list[NativeRow]) -> list[list[NativeRow]]:
    segments: list[list[NativeRow]] = [[]]
    keys: set[Any] = set()
    for parsed in rows:
        mine = {("key", _key(parsed))}
        if parsed.data["platform_id"]:
            mine.add(("pfid", parsed.data["platform_id"]))
        if mine & keys:
            segments.append([])
            keys = set()
        segments[-1].append(parsed)
        keys |= mine
    return [s for s in segments if s]


def rows_write(rows: list[NativeRow]) -> list[RowOutcome]:
    """Upsert parsed rows in order; one outcome per row. Runs in (or as) one transaction."""
    for parsed in rows:
        if not parsed.platform_id_given and not parsed.data["platform_id"]:
            parsed.data["platform_id"] = platform_id_from_url(parsed.data["url"])
    outcomes: list[RowOutcome] = []
    with transaction.atomic():
        for segment in _segments(rows):
            outcomes.extend(_segment_write(segment))
    return outcomes


def _by_keys(model: type[_Keyed], keys: list[tuple[str, str]],
             fields: tuple[str, ...] | None = None) -> dict[tuple[str, str], _Keyed]:
    if not keys:
        return {}
    qs = model.objects.filter(source__in={s for s, _ in keys}, pid__in={p for _, p in keys})
    wanted = set(keys)
    return {(o.source, o.pid): o for o in (qs.only(*fields) if fields else qs) if (o.source, o.pid) in wanted}


def _segment_write(rows: list[NativeRow]) -> list[RowOutcome]:
    keys = [_key(r) for r in rows]
    own = _by_keys(Problem, keys)
    aliases = _by_keys(ProblemAlias, [k for k in keys if k not in own], ("source", "pid", "problem_id"))
    aliased = Problem.objects.in_bulk({a.problem_id for a in aliases.values()}) if aliases else {}
    platform_ids = {r.data["platform_id"] for r in rows if r.data["platform_id"]}
    by_platform: dict[str, Problem] = {}
    if platform_ids:
        for problem in Problem.objects.filter(platform_id__in=platform_ids).order_by("-pk"):
            by_platform[problem.platform_id] = problem  # the oldest wins: it was there first

    targets: list[Target] = []
    new: list[tuple[int, Any]] = []
    changed: list[Problem] = []
    outcomes: list[RowOutcome | None] = [None] * len(rows)
    for i, parsed in enumerate(rows):
        data = parsed.data
        key = _key(parsed)
        if key in own:
            problem = own[key]
            differs = _assign_fields(problem, data)
            if differs:
                changed.append(problem)
            targets.append(Target(index=i, problem=problem, parsed=parsed, merge=False,
                                  status="updated" if differs else "unchanged"))
        elif key in aliases:
            targets.append(Target(index=i, problem=aliased[aliases[key].problem_id], parsed=parsed, merge=True,
                                  status="merged"))
        elif data["platform_id"] in by_platform:
            known = by_platform[data["platform_id"]]
            if is_original(data["platform"], data["platform_id"]) and not is_original(known.platform,
                                                                                     known.platform_id):
                _promote(known, parsed)
                targets.append(Target(index=i, problem=known, parsed=parsed, merge=False, status="merged"))
            else:
                targets.append(Target(index=i, problem=known, parsed=parsed, merge=True, status="merged"))
        else:
            # A plain namespace, not a model instance: at 50,000 rows Model.__init__ alone is seconds.
            fresh = SimpleNamespace(pk=None, source=data["source"], pid=data["pid"],
                                    **{f: data[f] for f in _FIELDS})
            new.append((i, fresh))
            targets.append(Target(index=i, problem=fresh, parsed=parsed, merge=False, status="created"))

    if new:
        fast_insert(Problem, [p for _, p in new])
        ids = {(source, pid): pk for source, pid, pk in Problem.objects.filter(
            source__in={p.source for _, p in new}, pid__in={p.pid for _, p in new}).values_list("source", "pid", "id")}
        for _, problem in new:
            problem.pk = ids[(problem.source, problem.pid)]
    if changed:
        Problem.objects.bulk_update(changed, list(_FIELDS), batch_size=500)

    aliases_write(targets)
    tags_write(targets)
    difficulty_write(targets)
    solutions_write(targets)
    kits_write(targets)
    suites_write(targets)

    for target in targets:
        status = target.status
        if status == "unchanged" and target.changes:
            status = "updated"
        outcomes[target.index] = RowOutcome(status=status, problem_id=target.problem.pk,
                                            source=target.parsed.data["source"], pid=target.parsed.data["pid"],
                                            counts=dict(target.counts))
    return [o for o in outcomes if o is not None]


def _assign_fields(problem: Problem, data: dict[str, Any]) -> bool:
    differs = False
    for name in _FIELDS:
        if getattr(problem, name) != data[name]:
            setattr(problem, name, data[name])
            differs = True
    return differs


def _promote(problem: Problem, parsed: NativeRow) -> None:
    """The original platform's row takes over a problem first imported from a mirror."""
    data = parsed.data
    ProblemAlias.objects.filter(source=data["source"], pid=data["pid"]).delete()
    ProblemAlias.objects.update_or_create(
        source=problem.source, pid=problem.pid, defaults={"problem": problem, "url": problem.url[:500]}
    )
    problem.source, problem.pid = data["source"], data["pid"]
    _assign_fields(problem, data)
    problem.save()


def outcomes_count(outcomes: list[RowOutcome]) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        totals[outcome.status] += 1
        for key, n in outcome.counts.items():
            totals[key] += n
    return dict(totals)
