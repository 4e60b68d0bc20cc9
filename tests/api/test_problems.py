from __future__ import annotations

import pytest

from problems.models import DifficultyLabel, ProblemAlias, Tag, TestSuite
from tests.api.conftest import AB_TESTS, make_suite
from tests.factories import ProblemFactory

# postgres: lookups, DISTINCT paging and EXISTS filters are worth checking on both databases.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_problem_list_pages_and_filters(api):
    graph = Tag.objects.create(name="graphs")
    for i in range(5):
        p = ProblemFactory(source="cf" if i % 2 else "atcoder", pid=f"p{i}", platform="cf" if i % 2 else "atcoder")
        if i == 1:
            p.tags.add(graph)
            DifficultyLabel.objects.create(problem=p, source="codeforces", level="1500")
        if i < 2:
            make_suite(p)
    page = api.get("/api/v1/problems", {"limit": 2, "offset": 1}).json()
    assert page["count"] == 5 and page["limit"] == 2 and page["offset"] == 1
    assert [x["pid"] for x in page["items"]] == ["p1", "p2"]
    assert api.get("/api/v1/problems", {"source": "cf"}).json()["count"] == 2
    assert api.get("/api/v1/problems", {"platform": "atcoder"}).json()["count"] == 3
    [tagged] = api.get("/api/v1/problems", {"tag": "graphs"}).json()["items"]
    assert tagged["pid"] == "p1" and tagged["tags"] == ["graphs"]
    assert tagged["difficulties"] == [{"source": "codeforces", "level": "1500", "score": None}]
    assert tagged["active_suite"]["version"] == 1 and tagged["active_suite"]["test_count"] == len(AB_TESTS)
    assert api.get("/api/v1/problems", {"difficulty": "1500"}).json()["count"] == 1
    assert api.get("/api/v1/problems", {"has_suite": "true"}).json()["count"] == 2
    assert api.get("/api/v1/problems", {"has_suite": "false"}).json()["count"] == 3
    assert api.get("/api/v1/problems", {"q": "P3"}).json()["items"][0]["ref"] == "cf:p3"


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 201}, {"offset": -1}, {"has_suite": "maybe"},
                                    {"offset": 10**20}, {"source": "x" * 51}])
def test_problem_list_refuses_bad_parameters_with_400(api, params):
    response = api.get("/api/v1/problems", params)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_problem_detail_by_pid_with_slashes(api, ab_problem):
    data = api.get("/api/v1/problems/ab/sum").json()
    assert data["ref"] == "test:ab/sum"
    assert data["samples"] == [{"input": "1 2\n", "output": "3\n"}]
    assert data["statement"].startswith("Read two integers")
    assert [s["version"] for s in data["suites"]] == [1]
    assert data["active_suite"]["origin"] == "generated"


def test_ambiguous_bare_pid_is_400_and_source_pid_resolves(api):
    ProblemFactory(source="codeforces", pid="1A", title="from codeforces")
    ProblemFactory(source="taco", pid="1A", title="from taco")
    response = api.get("/api/v1/problems/1A")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "ambiguous" and "codeforces:1A" in body["detail"] and "taco:1A" in body["detail"]
    assert api.get("/api/v1/problems/taco:1A").json()["title"] == "from taco"


def test_alias_pid_finds_the_merged_problem(api, ab_problem):
    ProblemAlias.objects.create(problem=ab_problem, source="mirror", pid="M-1")
    assert api.get("/api/v1/problems/M-1").json()["ref"] == "test:ab/sum"
    assert api.get("/api/v1/problems/mirror:M-1").json()["ref"] == "test:ab/sum"


def test_unknown_problem_is_404(api):
    response = api.get("/api/v1/problems/nope")
    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "detail": "no problem 'nope'"}


def test_suite_metadata_lists_tests_in_run_order_without_bodies(api, ab_problem):
    data = api.get("/api/v1/problems/ab/sum/suite").json()
    assert data["problem"] == "test:ab/sum" and data["version"] == 1 and data["status"] == "active"
    assert data["counts_by_kind"] == {"direct": 2, "regular": 1, "hacking": 1}
    assert data["time_limit_ms"] == 1000 and data["output_judge"] is None
    assert [t["kind"] for t in data["tests"]] == ["hacking", "regular", "direct", "direct"]
    assert all(t["input"] is None and t["output"] is None for t in data["tests"])


def test_suite_bodies_on_request_and_paged(api, ab_problem):
    data = api.get("/api/v1/problems/ab/sum/suite", {"include": "tests", "test_offset": 1, "test_limit": 2}).json()
    assert [(t["index"], t["input"], t["output"]) for t in data["tests"]] == [(1, "5 7\n", "12\n"), (2, "1 2\n", "3\n")]
    assert api.get("/api/v1/problems/ab/sum/suite", {"include": "everything"}).status_code == 400


def test_suite_by_version_and_superseded(api, ab_problem):
    make_suite(ab_problem, AB_TESTS[:2])
    assert api.get("/api/v1/problems/ab/sum/suite").json()["version"] == 2
    old = api.get("/api/v1/problems/ab/sum/suite", {"version": 1}).json()
    assert old["status"] == "superseded" and old["test_count"] == 4


def test_suite_404_without_active_suite_or_for_unknown_and_building_versions(api, ab_problem):
    bare = ProblemFactory(pid="bare")
    response = api.get("/api/v1/problems/bare/suite")
    assert response.status_code == 404 and response.json()["code"] == "no_active_suite"
    make_suite(bare, activate=False)
    assert api.get("/api/v1/problems/bare/suite", {"version": 1}).status_code == 404
    assert api.get("/api/v1/problems/ab/sum/suite", {"version": 9}).json()["code"] == "no_suite"
    assert TestSuite.objects.filter(problem=bare, status="building").count() == 1


def test_a_verification_names_the_problem_and_suite_the_problem_endpoints_name(django_assert_num_queries):
    from api.errors import ApiError
    from api.selectors import problem_resolve, suite_resolve, verification_target

    one = ProblemFactory(source="cf", pid="1A", time_limit_ms=1500)
    ProblemFactory(source="taco", pid="1A")  # a bare "1A" names two problems
    make_suite(one)
    make_suite(one)  # version 2 active, version 1 superseded
    lone = ProblemFactory(source="cf", pid="2B", time_limit_ms=3000, memory_limit_mb=64)
    make_suite(lone, origin=TestSuite.Origin.PUBLIC)
    make_suite(lone)  # generated: preferred over the public samples
    ProblemFactory(source="cf", pid="no-suite")
    odd = ProblemFactory(source="odd", pid="cf:2B")  # a pid that reads like a ref
    make_suite(odd, origin=TestSuite.Origin.IMPORTED)
    ProblemAlias.objects.create(problem=lone, source="mirror", pid="M-2")

    def outcome(resolve):
        try:
            problem, suite = resolve()
        except ApiError as exc:
            return type(exc).__name__, exc.code, exc.detail
        return problem.pk, suite.pk

    refs = ["1A", "cf:1A", "taco:1A", "2B", "cf:2B", "odd:cf:2B", "M-2", "mirror:M-2", "no-suite",
            "cf:no-suite", "nope", "cf:nope", ":", "", "x" * 301, "a\x00b"]
    seen = set()
    for ref in refs:
        for version in (None, 1, 2, 3):
            old = outcome(lambda ref=ref, version=version: (p := problem_resolve(ref), suite_resolve(p, version)))
            new = outcome(lambda ref=ref, version=version: verification_target(ref, version))
            assert new == old, (ref, version)
            seen.add(old if isinstance(old[0], str) else "found")
    assert {s[1] for s in seen if s != "found"} == {"ambiguous", "no_active_suite", "no_suite", "not_found"}

    with django_assert_num_queries(1):
        problem, suite = verification_target("2B", None)
    stored = TestSuite.objects.get(pk=suite.pk)
    assert (problem.pk, problem.time_limit_ms, problem.memory_limit_mb, problem.comparison) == (lone.pk, 3000, 64, "tokens")
    assert (suite.origin, suite.version, suite.test_count, suite.problem) == ("generated", 2, len(AB_TESTS), problem)
    # the ORM's own conversions: an aware creation time (the worker's cache key), JSON counts
    assert suite.created_at == stored.created_at and suite.created_at.tzinfo is not None
    assert suite.counts_by_kind == stored.counts_by_kind == {"direct": 2, "regular": 1, "hacking": 1}
    # an exact pid before a source:pid, and a source:pid, each in one query
    for ref, named in (("cf:2B", odd), ("odd:cf:2B", odd), ("cf:1A", one)):
        with django_assert_num_queries(1):
            assert verification_target(ref, None)[0].pk == named.pk
