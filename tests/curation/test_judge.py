"""The LLM judge behind the project's LLM client (faked by a loopback server): one recorded
call per completion with the versioned prompt, scores used by judge rules and combinations,
two judges compared, and an unreadable reply stored as an error, never as a score."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.models import Completion, JudgeScore
from curation.rules import rule_parse
from curation.selectors import job_analysis, table_of
from curation.services import (
    curation_job_import,
    curation_job_verify_here,
    curation_judge_run,
    selection_apply,
)
from generation.llm_judge import JUDGE_PROMPT, judge_reply_parse, judges_compare
from generation.models import LLMCall
from generation.parsing import ReplyInvalid
from tests.curation.conftest import right_count
from tests.curation.helpers import build_world, known_completions, write_jsonl

pytestmark = pytest.mark.django_db


def test_judges_score_record_and_select(tmp_path: Path, fake_judge):
    world = build_world()
    rows = [k.row for k in known_completions(world.problem.pid, 12, seed=3)]
    rows.append({"problem_id": world.problem.pid, "code": "print(0)  # UNREADABLE\n", "language": "python3",
                 "model": "teacher", "sample_index": 99})
    job = curation_job_verify_here(job=curation_job_import(path=write_jsonl(tmp_path / "c.jsonl", rows)))
    assert curation_judge_run(job=job, judge="judge-a") == {"scored": 12, "errors": 1}
    assert curation_judge_run(job=job, judge="judge-b") == {"scored": 12, "errors": 1}
    # Nothing is judged twice.
    assert curation_judge_run(job=job, judge="judge-a") == {"scored": 0, "errors": 0}
    from curation.selectors import job_progress

    progress = job_progress(job)
    assert progress["judge_calls"] == 26 and progress["judge_tokens"] == 26 * 240  # the fake's usage per reply
    calls = LLMCall.objects.filter(purpose="judge")
    assert calls.count() == 26 and len(fake_judge.requests) == 26
    assert set(calls.values_list("prompt_version", flat=True)) == {JUDGE_PROMPT}
    assert set(calls.values_list("model_name", flat=True)) == {"judge-a", "judge-b"}
    first = calls.order_by("id").first()
    assert "Read $n$ and print $2n$." in first.messages[1]["content"]
    assert JudgeScore.objects.get(completion__sample_index=99, judge="judge-a").score is None
    bad = JudgeScore.objects.get(completion__sample_index=99, judge="judge-a")
    assert "unreadable reply" in bad.error and bad.llm_call.parse_error
    # The scores are what the fake said (the right answers counted off the source).
    completions = {c.pk: c for c in Completion.objects.filter(job=job).exclude(sample_index=99)}
    for score in JudgeScore.objects.filter(judge="judge-a", completion_id__in=completions):
        assert score.score == right_count(completions[score.completion_id].code)
    # A judge rule and a combination keep what the scores and the pass fractions say.
    kept = set(selection_apply(job=job, rule=rule_parse("judge:judge-a>=7")).kept_ids)
    assert kept == {pk for pk, c in completions.items() if right_count(c.code) >= 7}
    combo = set(selection_apply(job=job, rule=rule_parse("tau>=0.8 & judge:judge-b>=9")).kept_ids)
    assert combo == {pk for pk, c in completions.items() if c.passed >= 8 and right_count(c.code) + 2 >= 9}
    # Two judges compared: at 7, judge-b keeps what judge-a keeps and those with 5 or 6 right.
    analysis = job_analysis(job, judge_threshold=7)
    row = table_of(analysis, "judge_overlap")["rows"][0]
    counts = [right_count(c.code) for c in completions.values()]
    a, b = sum(n >= 7 for n in counts), sum(n + 2 >= 7 for n in counts)
    assert row[:8] == ["judge-a", "judge-b", 12, a, b, a, 0, b - a]


def test_judge_replies_are_read_strictly():
    assert judge_reply_parse('ok\n```json\n{"correct": false, "score": 3, "rationale": "x"}\n```') == (3.0, False, "x")
    for bad in ("no json", '```json\n{"score": 11}\n```', '```json\n{"score": true}\n```',
                '```json\n{"score": "high"}\n```'):
        with pytest.raises(ReplyInvalid):
            judge_reply_parse(bad)


def test_judges_compare_by_hand():
    a = {1: 9.0, 2: 8.0, 3: 2.0, 4: 7.0, 5: None}
    b = {1: 9.0, 2: 3.0, 3: 8.0, 4: 7.0, 5: 9.0}
    cmp = judges_compare(a, b, 7)
    assert (cmp["compared"], cmp["kept_a"], cmp["kept_b"], cmp["both"], cmp["only_a"], cmp["only_b"]) == (4, 3, 3, 2, 1, 1)
    assert cmp["jaccard"] == pytest.approx(2 / 4) and cmp["agreement"] == pytest.approx(2 / 4)
