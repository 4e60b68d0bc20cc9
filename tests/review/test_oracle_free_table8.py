"""HardTests' Table 8 on our data: oracle-free suites (AceCoder, A.7) built with the oracles hidden,
measured against candidates with gold verdicts beside the oracle-based suite; the command, its
stored report on /evaluation/, and the demo consistency check with the stand-in LLM."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from generation.models import GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import Problem, Solution, TestKit, TestSuite
from problems.services import NewTest, solution_upsert, suite_activate, suite_add_tests, suite_create
from tests.factories import annotator
from tests.generation.conftest import FakeLLM, start_fake_llm
from tests.generation.test_oracle_free import ACE_SOLUTION, GOOD_PAIRS, WRONG_PAIRS, ace_pairs
from tests.oracle_free_kit import KADANE, a7_reply, brute_reply, kadane, make_solutionless

pytestmark = [pytest.mark.django_db]

ORACLE = KADANE + "# ORACLE-ONLY-MARKER\n"


@pytest.fixture
def fake_llm(settings) -> Iterator[FakeLLM]:
    fake, server = start_fake_llm()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake.url, "test-key"
    settings.HARDTESTS_LLM_MODEL, settings.HARDTESTS_LLM_TIMEOUT_S = "fake-model", 5.0
    settings.HARDTESTS_LLM_MAX_RETRIES, settings.HARDTESTS_LLM_REPLY_RETRIES = 0, 0
    settings.HARDTESTS_GENERATOR_TIME_S = settings.HARDTESTS_CHECKER_TIME_S = 5.0
    settings.HARDTESTS_BRUTE_FORCE_TIME_S = 5.0
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def _with_oracle_suite() -> Problem:
    problem = make_solutionless("t8/maxsub", candidates=True)
    solution_upsert(problem=problem, role=Solution.Role.ORACLE, language="python3", code=ORACLE, reliability=1)
    rng = random.Random(5)
    big = "200000\n" + " ".join(str(rng.randint(-10**9, 10**9)) for _ in range(200000)) + "\n"
    inputs = ["1\n-4\n", "3\n-3 -1 -2\n", "5\n-1 2 3 -2 4\n", big]
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input=i, output=f"{kadane(i)}\n", kind="hacking") for i in inputs])
    suite_activate(suite=suite)
    return problem


def test_table8_hides_the_oracles_and_reports_fpr_fnr_per_method(fake_llm: FakeLLM, tmp_path) -> None:
    problem = _with_oracle_suite()
    # per problem: AceCoder (pairs, solution), then A.7 (main reply, second brute force)
    fake_llm.reply(ace_pairs(GOOD_PAIRS + WRONG_PAIRS), ACE_SOLUTION, a7_reply(), brute_reply())
    out = tmp_path / "t8.json"
    text = StringIO()
    call_command("oracle_free_table8", "--pids", problem.pid, "--out", str(out), stdout=text, stderr=StringIO())
    report = json.loads(out.read_text())
    rows = {r["key"]: r for r in report["rows"]}
    # candidates: kadane (AC), quadratic (TLE), reset-to-zero (WA), crashes when n > 1000 (RE)
    assert (rows["oracle_based"]["tp"], rows["oracle_based"]["fp"], rows["oracle_based"]["tn"],
            rows["oracle_based"]["fn"]) == (1, 0, 3, 0)
    # AceCoder's small pairs let the slow and the crashing program through; A.7's max test does not
    assert (rows["acecoder"]["tp"], rows["acecoder"]["fp"], rows["acecoder"]["tn"], rows["acecoder"]["fn"]) == (1, 2, 1, 0)
    assert rows["acecoder"]["fpr"] == pytest.approx(2 / 3) and rows["acecoder"]["fnr"] == 0
    assert rows["acecoder"]["precision"] == pytest.approx(1 / 3) and rows["acecoder"]["recall"] == 1
    assert (rows["hardtests_a7"]["fp"], rows["hardtests_a7"]["fn"], rows["hardtests_a7"]["fpr"]) == (0, 0, 0)
    assert rows["hardtests_a7"]["paper"] == {"fpr": 0.1767, "fnr": 0.0219}
    assert "66.67" in text.getvalue() and "17.67 / 2.19" in text.getvalue()
    # the oracles were hidden from the model, and nothing a verifier uses changed
    assert all("ORACLE-ONLY-MARKER" not in json.dumps(r["messages"]) for r in fake_llm.requests)
    assert len(fake_llm.requests) == 4
    assert list(problem.suites.values_list("origin", flat=True)) == ["generated"]
    assert not TestKit.objects.filter(problem=problem).exists()
    runs = GenerationRun.objects.filter(problem=problem).order_by("id")
    assert [(r.mode, r.status, r.suite_id) for r in runs] == [("acecoder", "succeeded", None),
                                                             ("oracle_free", "succeeded", None)]
    assert LLMCall.objects.filter(run__in=runs).count() == 4
    # shown on /evaluation/
    client = Client()
    client.force_login(annotator())
    html = client.get("/evaluation/").content.decode()
    assert "Oracle-free suites (HardTests Table 8)" in html and "66.67" in html
    assert 'data-method="hardtests_a7"' in html and "consistency-check" not in html


def test_table8_refuses_without_llm_or_selection(settings) -> None:
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    with pytest.raises(CommandError, match="--pids or --filter"):
        call_command("oracle_free_table8", stdout=StringIO())
    with pytest.raises(CommandError, match="no LLM endpoint configured"):
        call_command("oracle_free_table8", "--pids", "x", stdout=StringIO())


@pytest.mark.slow
@pytest.mark.heavy(seconds=28)
def test_demo_consistency_check_runs_with_the_stand_in_llm(settings) -> None:
    from problems.demo import demo_load

    settings.HARDTESTS_REGULAR_CALLS, settings.HARDTESTS_HACKING_CALLS = 3, 2
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""  # nothing real is called
    demo_load()
    # max-subarray and two-sum-any have a right Python candidate for the stand-in's cross-check;
    # isqrt has none (its right candidate is C++): the oracle again confirms nothing
    pids = ["demo/max-subarray", "demo/two-sum-any", "demo/isqrt"]
    for pid in pids:
        run = generation_run_start(problem=Problem.objects.get(pid=pid), mode="from_kit", enqueue=False)
        assert generation_run_execute(run_id=run.pk).status == "succeeded"
    text = StringIO()
    call_command("oracle_free_table8", "--demo", "--pids", *pids, "--json", stdout=text)
    report = json.loads(text.getvalue())
    assert report["consistency_check"] is True and "kits, oracles and candidates are ours" in report["note"]
    rows = {r["key"]: r for r in report["rows"]}
    assert report["problems"] == 3 and rows["hardtests_a7"]["problems"] == 2
    assert report["failures"]["hardtests_a7"] == {"brute_force_unconfirmed": 1}
    # the stand-in replays correct oracles as brute force: no right program is rejected
    assert rows["hardtests_a7"]["fn"] == 0 and rows["oracle_based"]["fn"] == 0
    # isqrt's 4 candidates are counted for the oracle-based suite only
    assert rows["hardtests_a7"]["programs"] == rows["oracle_based"]["programs"] - 4 > 0
    client = Client()
    client.force_login(annotator())
    assert "consistency-check" in client.get("/evaluation/").content.decode()
