"""LLM-as-a-judge: a model reads a problem and one solution and scores it, without running it.

One function, `judge_solution`, behind the project's one LLM client (generation.llm.chat), so
every call is an LLMCall row like generation's own (prompt, reply, model, tokens, latency).
The prompt is the versioned template generation/prompts/judge_v1.md. A reply that cannot be
read gives a verdict with `score=None` and the reason, never a made-up score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generation.llm import LLMConfig, LLMUnavailable, chat
from generation.models import GenerationRun, LLMCall
from generation.parsing import ReplyInvalid, extract_json

# prompting's renderer is the one every prompt goes through (slots filled once, verbatim).
from generation.prompting import _messages as render_prompt
from generation.services import run_record_finished
from problems.models import Problem

JUDGE_PROMPT = "judge_v1"
MAX_CODE_CHARS = 60_000


@dataclass(frozen=True)
class JudgeVerdict:
    score: float | None  # 0-10
    correct: bool | None
    rationale: str
    error: str
    call: LLMCall | None


def judge_prompt(*, problem: Problem, language: str, code: str, version: str = JUDGE_PROMPT) -> list[dict[str, str]]:
    return render_prompt(version, {
        "statement": problem.statement.strip(), "time_limit_ms": problem.time_limit_ms,
        "memory_limit_mb": problem.memory_limit_mb, "language": language, "code": code[:MAX_CODE_CHARS].rstrip(),
    })


def judge_reply_parse(reply: str) -> tuple[float, bool | None, str]:
    """(score, correct, rationale) of a judge's reply; ReplyInvalid when it has none."""
    data = extract_json(reply, ("score",))
    raw = data.get("score")
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ReplyInvalid(f"score is not a number: {raw!r}")
    try:
        score = float(raw)
    except ValueError as exc:
        raise ReplyInvalid(f"score is not a number: {raw!r}") from exc
    if not 0 <= score <= 10:
        raise ReplyInvalid(f"score {score} is outside 0-10")
    correct = data.get("correct")
    return score, correct if isinstance(correct, bool) else None, str(data.get("rationale") or "")


def judge_audit_run(*, problem: Problem, model: str, note: str) -> GenerationRun:
    """The run a judge's calls are recorded under (LLMCall belongs to a run): a finished one
    that made no suite, so it never holds the problem's one open generation run."""
    return run_record_finished(problem=problem, model_name=model, note=note)


def judge_solution(*, run: GenerationRun, problem: Problem, language: str, code: str, model: str,
                   prompt_version: str = JUDGE_PROMPT, temperature: float | None = 0.0,
                   llm: LLMConfig | None = None) -> JudgeVerdict:
    """One judge call: the model's 0-10 score and verdict for `code` on `problem`, asked of
    `llm`'s endpoint (None: the settings')."""
    messages = judge_prompt(problem=problem, language=language, code=code, version=prompt_version)
    try:
        reply, call = chat(run=run, purpose="judge", messages=messages, prompt_version=prompt_version, model=model,
                           temperature=temperature, llm=llm)
    except LLMUnavailable as exc:
        return JudgeVerdict(None, None, "", f"LLM unavailable: {exc}", None)
    try:
        score, correct, rationale = judge_reply_parse(reply)
    except ReplyInvalid as exc:
        LLMCall.objects.filter(pk=call.pk).update(parse_error=str(exc)[:2000])
        return JudgeVerdict(None, None, "", f"unreadable reply: {exc}", call)
    return JudgeVerdict(score, correct, rationale, "", call)


def judges_compare(a: dict[Any, float | None], b: dict[Any, float | None], threshold: float) -> dict[str, Any]:
    """How two judges' kept sets (score >= threshold) overlap on the items both scored."""
    common = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    keep_a = {k for k in common if (a[k] or 0) >= threshold}
    keep_b = {k for k in common if (b[k] or 0) >= threshold}
    both, union = keep_a & keep_b, keep_a | keep_b
    n = len(common)
    agree = sum(1 for k in common if (k in keep_a) == (k in keep_b))
    p_a, p_b = (len(keep_a) / n, len(keep_b) / n) if n else (0.0, 0.0)
    expected = p_a * p_b + (1 - p_a) * (1 - p_b)
    observed = agree / n if n else 0.0
    kappa = (observed - expected) / (1 - expected) if n and expected < 1 else None
    return {"compared": n, "threshold": threshold, "kept_a": len(keep_a), "kept_b": len(keep_b),
            "both": len(both), "only_a": len(keep_a - keep_b), "only_b": len(keep_b - keep_a),
            "jaccard": len(both) / len(union) if union else None, "agreement": observed if n else None,
            "kappa": kappa}
