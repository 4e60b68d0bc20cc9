"""API answers name an oracle-free suite's origin and trust, never offer "" as the expected output
of a time-only test, and the verification reward judges that test on exit and time only."""

from __future__ import annotations

import pytest

from tests.oracle_free_kit import KADANE, TRUST, make_oracle_free_suite, make_solutionless

CRASH_WHEN_4 = KADANE.replace("n = int(data[0])", "n = int(data[0])\nif n == 4:\n    raise ValueError(n)")


@pytest.mark.django_db
def test_problem_detail_and_suite_say_oracle_free_with_trust(api) -> None:
    problem = make_solutionless()
    make_oracle_free_suite(problem)
    detail = api.get(f"/api/v1/problems/{problem.source}:{problem.pid}").json()
    assert detail["active_suite"]["origin"] == "oracle_free" and detail["active_suite"]["trust"] == TRUST
    assert [s["origin"] for s in detail["suites"]] == ["oracle_free"]
    listed = api.get("/api/v1/problems", {"source": "of"}).json()["items"][0]
    assert listed["active_suite"]["origin"] == "oracle_free" and listed["active_suite"]["trust"]["method"] == "hardtests_a7"
    suite = api.get(f"/api/v1/problems/{problem.source}:{problem.pid}/suite", {"include": "tests"}).json()
    assert suite["origin"] == "oracle_free"
    big = [t for t in suite["tests"] if t["kind"] == "time_only"]
    assert len(big) == 1 and big[0]["output"] is None and big[0]["input"] == "4\n1 -2 3 4\n"
    assert all(isinstance(t["output"], str) and t["output"] for t in suite["tests"] if t["kind"] != "time_only")


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_verify_answers_carry_the_origin_and_judge_the_time_only_test(api, sandbox_worker) -> None:
    problem = make_solutionless()
    make_oracle_free_suite(problem)
    ref = f"{problem.source}:{problem.pid}"
    good = api.post("/api/v1/verify", {"problem": ref, "language": "python3", "code": KADANE, "mode": "all"}).json()
    assert (good["reward"], good["verdict"], good["passed"], good["total"]) == (1, "AC", 4, 4)
    assert good["suite_origin"] == "oracle_free"
    bad = api.post("/api/v1/verify", {"problem": ref, "language": "python3", "code": CRASH_WHEN_4,
                                      "mode": "all"}).json()
    assert bad["reward"] == 0 and bad["verdict"] == "RE" and bad["suite_origin"] == "oracle_free"
    assert [t["verdict"] for t in bad["tests"] if t["kind"] == "time_only"] == ["RE"]
