"""Everything that judges is part of the cache keys: a judging function fixed in its kit (a new
kit version), or edited in place, reaches a running worker whose suite cache is warm and the
verdict cache on the next verification, for any token; nothing judges with the old one."""

from __future__ import annotations

from typing import Any

import pytest

from problems import judging
from problems.models import OutputJudge, Problem
from problems.services import judge_create, kit_create, kit_with_edited_code
from problems.verify_contract import suite_from_snapshot, suite_snapshot, verdict_cache_key
from problems.verify_types import VerifyRequest
from tests.api.conftest import WRONG, make_suite
from tests.factories import ProblemFactory, UserFactory

LENIENT = "def output_judging_function(input_str, candidate_output, reference_output):\n    return True\n"
STRICT = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
          "    return candidate_output.split() == reference_output.split()\n")


def _kit_judged(problem: Problem, code: str) -> Any:
    judge = judge_create(problem=problem, code=code, origin="llm")
    return kit_create(problem=problem, origin="llm", validator=None, output_judge=judge)


def _verify(api: Any, code: str) -> dict[str, Any]:
    response = api.post("/api/v1/verify", {"problem": "keys:ab", "language": "python3", "code": code})
    assert response.status_code == 200, response.content
    return dict(response.json())


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_fixed_judge_reaches_a_running_worker_and_the_verdict_cache(api, make_api, sandbox_worker):
    problem = ProblemFactory(source="keys", pid="ab", time_limit_ms=1000)
    make_suite(problem)  # a generated suite with no judge of its own: the latest kit's judges it
    kit = _kit_judged(problem, LENIENT)
    first = _verify(api, WRONG)
    # judged by the lenient function, and the worker now holds the suite's bodies and judge
    assert (first["verdict"], first["cached"]) == ("AC", False)
    assert _verify(api, WRONG)["cached"] is True
    # the kit's judge is fixed: a new kit version with a new judging function
    kit_with_edited_code(kit=kit, user=UserFactory(username="editor"), judge_code=STRICT)
    other = make_api()
    for client in (other, api):  # another token, and the same one: neither gets the old answer
        response = client.post("/api/v1/verify", {"problem": "keys:ab", "language": "python3", "code": WRONG})
        assert response.status_code == 200, response.content
        assert (response.json()["verdict"], response.json()["cached"]) == ("WA", False), response.json()
    # edited in place (the admin edits a judge's code): the same again
    OutputJudge.objects.filter(problem=problem).update(code=LENIENT)
    assert (_verify(api, WRONG)["verdict"], _verify(make_api("third"), WRONG)["verdict"]) == ("AC", "AC")


@pytest.mark.django_db
def test_every_input_of_a_verdict_is_in_both_keys() -> None:
    problem = ProblemFactory(source="keys", pid="unit")
    suite = make_suite(problem)

    def fresh() -> Any:  # a new instance, as each request resolves its own
        return type(suite).objects.select_related("problem").get(pk=suite.pk)

    def key() -> str:
        suite = fresh()
        request = VerifyRequest(problem_id=problem.pk, suite_id=suite.pk, language="python3", code=WRONG)
        return verdict_cache_key(request, suite_snapshot(suite), owner_id=1)

    keys = [key()]
    kit = _kit_judged(problem, LENIENT)
    keys.append(key())
    kit = kit_with_edited_code(kit=kit, user=UserFactory(username="e"), judge_code=STRICT)
    keys.append(key())
    OutputJudge.objects.filter(pk=kit.output_judge_id).update(code=STRICT + "\n# edited\n")
    keys.append(key())
    problem.comparison = "exact"
    problem.save(update_fields=["comparison"])
    keys.append(key())
    assert len(set(keys)) == len(keys)
    # the worker's suite cache: loaded once, and again (with the new judge) after each change
    judging.suite_cache.clear()
    loaded = judging.suite_cache.get(fresh())
    assert loaded.judge_code == STRICT + "\n# edited\n" and judging.suite_cache.get(fresh()) is loaded
    snapshot = suite_snapshot(fresh())
    assert suite_from_snapshot(snapshot) is not None
    OutputJudge.objects.filter(pk=kit.output_judge_id).update(code=LENIENT)
    # the old snapshot still finds the copy it names; a new one (the API's next) does not
    assert suite_from_snapshot(snapshot) is not None and suite_from_snapshot(suite_snapshot(fresh())) is None
    assert judging.suite_cache.get(fresh()).judge_code == LENIENT
    # a snapshot of an earlier release (no judging digest) never hits
    assert suite_from_snapshot({k: v for k, v in snapshot.to_wire().items() if k != "judging"}) is None
