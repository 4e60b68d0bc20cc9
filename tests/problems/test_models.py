from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from problems.blobs import blob_get, blob_put, blobs_put
from problems.models import Blob, TestSuite
from problems.services import (
    NewTest,
    SuiteStateError,
    suite_activate,
    suite_add_tests,
    suite_create,
    suite_fail,
)
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def _suite(problem, origin=TestSuite.Origin.GENERATED, n=2):
    suite = suite_create(problem=problem, origin=origin)
    suite_add_tests(suite=suite, tests=[NewTest(input=f"{i}\n", output=f"{i}\n", kind="direct") for i in range(n)])
    return suite


def test_database_refuses_two_active_suites_of_one_origin():
    problem = ProblemFactory()
    first = _suite(problem)
    second = _suite(problem)
    suite_activate(suite=first)
    with pytest.raises(IntegrityError), transaction.atomic():
        TestSuite.objects.filter(pk=second.pk).update(status=TestSuite.Status.ACTIVE)
    assert TestSuite.objects.filter(problem=problem, status="active").count() == 1


def test_active_suites_of_different_origins_coexist():
    problem = ProblemFactory()
    suite_activate(suite=_suite(problem, TestSuite.Origin.GENERATED))
    suite_activate(suite=_suite(problem, TestSuite.Origin.PUBLIC))
    assert set(problem.suites.filter(status="active").values_list("origin", flat=True)) == {"generated", "public"}


def test_activation_supersedes_the_previous_suite_atomically():
    problem = ProblemFactory()
    old = suite_activate(suite=_suite(problem))
    new = suite_activate(suite=_suite(problem, n=3))
    old.refresh_from_db()
    assert (old.status, new.status) == ("superseded", "active")
    assert new.version == old.version + 1 and new.test_count == 3


def test_failed_build_leaves_previous_suite_active():
    problem = ProblemFactory()
    old = suite_activate(suite=_suite(problem))
    broken = _suite(problem)
    suite_fail(suite=broken, note="oracles disagree")
    old.refresh_from_db()
    broken.refresh_from_db()
    assert old.status == "active" and broken.status == "failed"
    with pytest.raises(SuiteStateError):
        suite_activate(suite=broken)


def test_conditional_update_lets_only_one_activation_win():
    problem = ProblemFactory()
    suite = _suite(problem)
    suite_activate(suite=suite)
    with pytest.raises(SuiteStateError):
        suite_activate(suite=suite)


def test_identical_bodies_are_stored_once_and_read_back():
    sha1, size = blob_put("1 2\n" * 1000)
    sha2, _ = blob_put(b"1 2\n" * 1000)
    assert sha1 == sha2 and size == 4000
    assert Blob.objects.filter(sha256=sha1).count() == 1
    assert blob_get(sha1) == b"1 2\n" * 1000
    assert Blob.objects.get(sha256=sha1).stored_size < 200  # compressed on disk
    assert [s for s, _ in blobs_put(["a", "b", "a"])] == [blob_put("a")[0], blob_put("b")[0], blob_put("a")[0]]


def test_tests_keep_only_a_bounded_preview():
    problem = ProblemFactory()
    suite = suite_create(problem=problem, origin="generated")
    suite_add_tests(suite=suite, tests=[NewTest(input="9 " * 50_000, output="x", kind="regular")])
    test = suite.tests.get()
    assert test.input_size == 100_000 and len(test.input_preview) <= 200


def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_deleting_a_problem_takes_its_kits_validators_and_suites_with_it():
    from problems.models import Problem
    from problems.services import kit_create, validator_create

    problem = ProblemFactory()
    validator = validator_create(problem=problem, code="def validate_input(s):\n    return True\n", origin="llm")
    kit_create(problem=problem, origin="llm", validator=validator)
    suite_activate(suite=_suite(problem))
    problem.delete()
    assert not Problem.objects.filter(pk=problem.pk).exists()
