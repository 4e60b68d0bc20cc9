"""The project's own lossless JSON-lines format: one problem per line.

Every other format is mapped onto this one (``hardtests.py``, ``codecontests.py``...), so a
row is checked here completely before anything is written (`native_row_parse`, pydantic
models below) and there is one write path (`problems.importers.writer`). The format is
documented in the README (section "Native dataset format"); `problems.exporters.native`
writes it.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationError,
    model_validator,
)

from problems.importers.base import RowError
from problems.models import (
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_TIME_LIMIT_MS,
    CodeOrigin,
    Comparison,
    Language,
    Solution,
    TestCase,
    TestSuite,
)

__all__ = ["KIT_KEYS", "NativeRow", "RowError", "kit_parse", "native_row_parse"]

KIT_KEYS = (
    "input_validator",
    "needs_custom_output_judging_function",
    "output_judging_function",
    "LLMGen_input",
    "RPGen_SPGen_input_generator",
    "HackGen_input_generator",
)
_CODE_KEYS = ("input_validator", "output_judging_function", "RPGen_SPGen_input_generator",
              "HackGen_input_generator", "batch_generator")


@dataclass
class NativeRow:
    data: dict[str, Any]
    kit: dict[str, Any] | None = None
    suites: list[dict[str, Any]] = field(default_factory=list)
    aliases: list[dict[str, str]] = field(default_factory=list)
    # True when the row said nothing about platform_id, so the writer may derive one.
    platform_id_given: bool = True


# --- the row's shape, validated by pydantic -------------------------------------------------------
# Mostly pydantic's own (Rust) checks, with Python callbacks only where a rule needs one, because
# imports parse ~1,000 rows a second. Lengths are checked here because PostgreSQL refuses a
# longer value mid-transaction (aborting a whole import at write time) while SQLite stores it.
# Nullable fields read as their default when the rows are turned into the writer's dicts.


def _integral(value: Any) -> Any:
    """JSON integers, and floats that are whole numbers (2000.0); never booleans or strings."""
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ValueError(f"must be an integer, got {value!r}")
    return int(value)


def _number(value: Any) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise ValueError("must be a number or null")
    return value


def Choice(values: Any) -> Any:  # noqa: N802 (a type factory)
    literal: Any = Literal.__getitem__(tuple(c.value for c in values))
    return literal | None


# Strings of at most N characters (Text: no limit), or None.
Text = Annotated[StrictStr, StringConstraints(max_length=None)] | None
Text50 = Annotated[StrictStr, StringConstraints(max_length=50)] | None
Text100 = Annotated[StrictStr, StringConstraints(max_length=100)] | None
Text200 = Annotated[StrictStr, StringConstraints(max_length=200)] | None
Text500 = Annotated[StrictStr, StringConstraints(max_length=500)] | None
# pattern: at least one non-blank character (pydantic searches, it does not anchor)
Required = Annotated[StrictStr, StringConstraints(max_length=None, pattern=r"\S")]
Required200 = Annotated[StrictStr, StringConstraints(max_length=200, pattern=r"\S")]
Required500 = Annotated[StrictStr, StringConstraints(max_length=500, pattern=r"\S")]

# The models' choices, as Literals of their values (built at run time, so mypy sees plain strings).
if TYPE_CHECKING:
    TestKindChoice: TypeAlias = str | None
    OutputOriginChoice: TypeAlias = str | None
    GoldVerdictChoice: TypeAlias = str | None
    CodeOriginChoice: TypeAlias = str | None
    ComparisonChoice: TypeAlias = str | None
    SuiteOriginValue: TypeAlias = str
    RoleValue: TypeAlias = str
    LanguageValue: TypeAlias = str
else:
    TestKindChoice = Choice(TestCase.Kind)
    OutputOriginChoice = Choice(TestCase.OutputOrigin)
    GoldVerdictChoice = Choice(Solution.GoldVerdict)
    CodeOriginChoice = Choice(CodeOrigin)
    ComparisonChoice = Choice(Comparison)
    SuiteOriginValue = Literal.__getitem__(tuple(c.value for c in TestSuite.Origin))
    RoleValue = Literal.__getitem__(tuple(c.value for c in Solution.Role))
    LanguageValue = Literal.__getitem__(tuple(c.value for c in Language))

Count = Annotated[StrictInt, Field(ge=0)] | None


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class BodiesIn(_Model):
    input: StrictStr | None = None
    output: StrictStr | None = None
    input_b64: StrictStr | None = None
    output_b64: StrictStr | None = None


class TestIn(BodiesIn):
    kind: TestKindChoice = None
    generator: Text200 = None
    call_number: Count = None
    # oracle-free suites: who made the output ("" an oracle or the dataset); a time_only test has none
    output_origin: OutputOriginChoice = None


class SuiteIn(_Model):
    origin: SuiteOriginValue
    tests: list[TestIn] | None = None
    # a suite built with fewer oracles than HARDTESTS_MIN_ORACLES normally demands
    unverified: StrictBool | None = None
    # oracle_free suites: how the model-made outputs were checked (generation/oracle_free)
    trust: dict[str, Any] | None = None


class LabelIn(_Model):
    source: Annotated[StrictStr, StringConstraints(min_length=1, max_length=50)]
    level: Annotated[StrictStr, StringConstraints(max_length=50), BeforeValidator(
        lambda v: v if v is None else str(v))]
    score: Annotated[float | int | None, BeforeValidator(_number)] = None


class SolutionIn(_Model):
    role: RoleValue
    language: LanguageValue
    code: Required
    source: Text100 = None
    reliability: Count = None
    verdict: GoldVerdictChoice = None
    origin: Text100 = None
    name: Text200 = None
    note: Text500 = None


class AliasIn(_Model):
    source: Required
    pid: Required
    url: Text500 = None


class KitIn(_Model):
    input_validator: Text = None
    output_judging_function: Text = None
    RPGen_SPGen_input_generator: Text = None
    HackGen_input_generator: Text = None
    batch_generator: Text = None
    needs_custom_output_judging_function: StrictBool | None = None
    LLMGen_input: list[StrictStr] | None = None
    model: Text100 = None
    origin: CodeOriginChoice = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _complete(self) -> KitIn:
        if self.needs_custom_output_judging_function and not (self.output_judging_function or "").strip():
            raise ValueError("kit says it needs an output judging function but output_judging_function is empty")
        if not any(getattr(self, k) for k in _CODE_KEYS) and not self.LLMGen_input:
            raise ValueError("kit has no validator, judge, inputs or generators")
        return self


class RowIn(_Model):
    source: Text50 = None
    pid: Required200
    title: Required500
    statement: Text = None
    platform: Text50 = None
    platform_id: Text200 = None
    url: Text500 = None
    comparison: ComparisonChoice = None
    time_limit_ms: Annotated[int | None, BeforeValidator(_integral), Field(ge=1, le=600_000)] = None
    memory_limit_mb: Annotated[int | None, BeforeValidator(_integral), Field(ge=1, le=65_536)] = None
    contest_date: Any = None
    difficulty: list[LabelIn] | None = None
    tags: list[Annotated[StrictStr, StringConstraints(max_length=100)]] | None = None
    samples: list[BodiesIn] | None = None
    solutions: list[SolutionIn] | None = None
    extra: dict[str, Any] | None = None
    kit: KitIn | None = None
    suites: list[SuiteIn] | None = None
    aliases: list[AliasIn] | None = None


def _body(item: BodiesIn, key: str, where: str) -> str | bytes:
    """A test body: a string, or ``<key>_b64`` for bytes that are not UTF-8 (kept exactly)."""
    encoded = getattr(item, f"{key}_b64")
    if encoded is not None:
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise RowError(f"{where}: {key}_b64 is not valid base64") from None
    value: str | None = getattr(item, key)
    if value is None:
        raise RowError(f"{where}: {key} must be a string")
    return value


def _where(loc: tuple[int | str, ...]) -> str:
    """('solutions', 0, 'role') -> 'solutions[0].role'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


_PLAIN_TYPES = {"string_type": "a string", "list_type": "a list", "bool_type": "true or false",
                "int_type": "an integer"}


def _row_error(exc: ValidationError) -> RowError:
    """The first problem pydantic found, named by its place in the row."""
    error = exc.errors(include_url=False)[0]
    # Drop pydantic's union/type branch names (e.g. 'function-before[...]') from the path.
    loc = tuple(p for p in error["loc"] if isinstance(p, int) or not str(p).startswith(("function-", "literal[")))
    message = error["msg"].removeprefix("Value error, ")
    got = type(error.get("input")).__name__
    kind = error["type"]
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        message = f"must be an object, got {got}"
    elif kind in _PLAIN_TYPES:
        message = f"must be {_PLAIN_TYPES[kind]}, got {got}"
    elif kind == "literal_error":
        message = f"must be one of {error['ctx']['expected']}, got {error.get('input')!r}"
    elif kind == "string_pattern_mismatch":
        message = "is empty"
    elif kind == "string_too_long":
        message = f"is longer than {error['ctx']['max_length']} characters"
    elif kind in ("greater_than_equal", "less_than_equal"):
        message = f"{message.replace('Input should be', 'must be')}, got {error.get('input')!r}"
    if kind == "missing":
        return RowError(f"missing required field {_where(loc)!r}")
    if message.startswith(("suites[", "kit says", "kit has", "samples must")):
        return RowError(message)
    return RowError(f"{_where(loc)}: {message}" if loc else message)


def native_row_parse(row: Any) -> NativeRow:
    """Check a native row and normalise it; raises RowError naming the first problem found."""
    if not isinstance(row, dict):
        raise RowError(f"a row must be a JSON object, got {type(row).__name__}")
    try:
        parsed = RowIn.model_validate(row)
    except ValidationError as exc:
        raise _row_error(exc) from None
    date = None
    if parsed.contest_date:
        try:
            date = dt.date.fromisoformat(str(parsed.contest_date)[:10])
        except ValueError:
            raise RowError(f"contest_date: is not an ISO date: {parsed.contest_date!r}") from None
    tags = parsed.tags or []
    if not all(t.strip() for t in tags):
        raise RowError("tags: must be a list of non-empty strings")
    labels = {label.source: {"source": label.source, "level": label.level, "score": label.score}
              for label in parsed.difficulty or []}
    samples = []
    for i, sample in enumerate(parsed.samples or []):
        pair = {"input": _body(sample, "input", f"samples[{i}]"), "output": _body(sample, "output", f"samples[{i}]")}
        if isinstance(pair["input"], bytes) or isinstance(pair["output"], bytes):
            raise RowError("samples must be text (only suite tests may be binary)")
        samples.append(pair)
    data: dict[str, Any] = {
        "source": parsed.source or "native",
        "pid": parsed.pid,
        "title": parsed.title,
        "statement": parsed.statement or "",
        "platform": parsed.platform or "",
        "platform_id": parsed.platform_id or "",
        "url": parsed.url or "",
        "comparison": parsed.comparison or Comparison.TOKENS.value,
        "time_limit_ms": DEFAULT_TIME_LIMIT_MS if parsed.time_limit_ms is None else parsed.time_limit_ms,
        "memory_limit_mb": DEFAULT_MEMORY_LIMIT_MB if parsed.memory_limit_mb is None else parsed.memory_limit_mb,
        "contest_date": date,
        "difficulty": [labels[k] for k in sorted(labels)],
        "tags": sorted({t.strip() for t in tags}),
        "samples": samples,
        "solutions": [
            {"role": s.role, "language": s.language, "code": s.code, "source": s.source or "",
             "reliability": s.reliability, "gold_verdict": s.verdict or Solution.GoldVerdict.UNKNOWN.value,
             "origin": s.origin or "human", "name": s.name or "", "note": s.note or ""}
            for s in parsed.solutions or []
        ],
        "extra": parsed.extra or {},
    }
    suites: list[dict[str, Any]] = []
    for i, suite in enumerate(parsed.suites or []):
        if any(suite.origin == seen["origin"] for seen in suites):
            raise RowError(f"suites[{i}]: a second suite of origin {suite.origin!r} (one per origin)")
        tests = []
        for j, test in enumerate(suite.tests or []):
            where = f"suites[{i}].tests[{j}]"
            # A time-only test has no expected output (judged on time and exit only).
            time_only = test.kind == TestCase.Kind.TIME_ONLY.value
            tests.append({"input": _body(test, "input", where),
                          "output": b"" if time_only else _body(test, "output", where),
                          "output_origin": TestCase.OutputOrigin.NONE.value if time_only else (test.output_origin or ""),
                          "kind": test.kind or TestCase.Kind.IMPORTED.value, "generator": test.generator or "",
                          "call_number": test.call_number})
        suites.append({"origin": suite.origin, "tests": tests, "unverified": bool(suite.unverified),
                       "trust": suite.trust or {}})
    return NativeRow(
        data=data,
        kit=_kit_dict(parsed.kit) if parsed.kit is not None else None,
        suites=suites,
        aliases=[{"source": a.source, "pid": a.pid, "url": a.url or ""} for a in parsed.aliases or []],
        platform_id_given="platform_id" in row,
    )


def _kit_dict(kit: KitIn) -> dict[str, Any]:
    parsed: dict[str, Any] = {key: getattr(kit, key) or "" for key in _CODE_KEYS}
    parsed.update(
        {
            "needs_custom_output_judging_function": bool(kit.needs_custom_output_judging_function),
            "LLMGen_input": list(kit.LLMGen_input or []),
            "model": kit.model or "",
            "origin": kit.origin or CodeOrigin.IMPORTED.value,
            "extra": kit.extra or {},
        }
    )
    return parsed


def kit_parse(kit: Any) -> dict[str, Any]:
    """Check a test-case kit with the keys of DESIGN.md (plus ``batch_generator`` and ``extra``)."""
    if not isinstance(kit, dict):
        raise RowError("kit must be an object with the keys of the test-case kit, or null")
    try:
        return _kit_dict(KitIn.model_validate(kit))
    except ValidationError as exc:
        error = str(_row_error(exc))
        raise RowError(error if error.startswith("kit") else f"kit.{error}") from None

