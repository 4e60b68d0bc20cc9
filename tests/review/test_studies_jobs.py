"""The sandboxed parts of studies, run for real: the try-it box and adding a suggested input."""

from __future__ import annotations

import pytest

from problems.blobs import blob_text
from problems.models import TestSuite
from review.models import Annotation, SuiteAddition, ValidatorTrial
from review.studies import assignment, services
from review.studies.jobs import suite_addition_job, validator_trial_job
from review.studies.services import Labels
from tests.factories import annotator, maintainer
from tests.review.test_studies_support import (
    LOOSE_VALIDATOR,
    ORACLE_A,
    WRONG_ORACLE,
    make_problem,
    make_study,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _item(**problem_kwargs):
    problem = make_problem(validator=LOOSE_VALIDATOR, **problem_kwargs)
    a = annotator("a")
    study = make_study(problems=[problem], annotators=[a], overlap=1)
    return study, study.items.get(), a


def _trial(item, user, text, purpose=ValidatorTrial.Purpose.TRY) -> ValidatorTrial:
    trial = services.trial_start(item=item, user=user, text=text, purpose=purpose)
    validator_trial_job(trial.pk)
    trial.refresh_from_db()
    return trial


def test_try_it_runs_the_validator_in_the_sandbox():
    _, item, a = _item()
    accepted = _trial(item, a, "-5 3\n")  # the loose validator misses the lower bound
    rejected = _trial(item, a, "1 2 3\n")
    assert (accepted.status, accepted.accepted) == ("done", True)
    assert (rejected.status, rejected.accepted) == ("done", False)
    assert validator_trial_job(accepted.pk) == "skipped"  # a second delivery does nothing


def test_a_crashing_validator_is_reported_as_a_failed_trial():
    problem = make_problem(validator="def validate_input(s):\n    raise ValueError('boom')\n")
    study = make_study(problems=[problem], annotators=[annotator("a")], overlap=1)
    trial = _trial(study.items.get(), study.annotators.get(), "1 2\n")
    assert trial.status == "failed" and trial.accepted is None and "boom" in trial.error


def test_a_submitted_counterexample_learns_what_the_validator_says():
    study, item, a = _item()
    annotation = assignment.item_next(study=study, user=a)
    services.annotation_submit(annotation=annotation, labels=Labels(
        validator_label="incorrect", validator_reason="wrong_bound", counterexample="-5 3\n", suite_label="complete",
    ))
    trial = ValidatorTrial.objects.get(purpose="counterexample")
    validator_trial_job(trial.pk)
    assert Annotation.objects.get(pk=annotation.pk).counterexample_accepted is True


def test_a_counterexample_checked_on_the_page_is_recorded_at_submit():
    study, item, a = _item()
    annotation = assignment.item_next(study=study, user=a)
    _trial(item, a, "-5 3\r\n", purpose=ValidatorTrial.Purpose.COUNTEREXAMPLE)
    services.annotation_submit(annotation=annotation, labels=Labels(
        validator_label="incorrect", validator_reason="wrong_bound", counterexample="-5 3\r\n", suite_label="complete",
    ))
    assert Annotation.objects.get(pk=annotation.pk).counterexample_accepted is True
    assert ValidatorTrial.objects.count() == 1  # no second check needed


def _addition(item, text) -> SuiteAddition:
    addition = services.suite_addition_start(item=item, user=maintainer(), text=text)
    suite_addition_job(addition.pk)
    addition.refresh_from_db()
    return addition


def test_a_suggested_input_becomes_a_new_suite_version_when_oracles_agree():
    _, item, _ = _item()
    old = item.suite
    addition = _addition(item, "40 2\r\n")
    assert addition.status == "done", addition.error
    new = addition.new_suite
    old.refresh_from_db()
    assert new.status == TestSuite.Status.ACTIVE and old.status == TestSuite.Status.SUPERSEDED
    assert new.test_count == old.test_count + 1 and new.version == old.version + 1
    added = new.tests.order_by("-ordinal").first()
    assert blob_text(added.input_sha256) == "40 2\n" and blob_text(added.output_sha256).strip() == "42"
    assert added.oracle.reliability == 1 and added.validator_version == 1
    # the old tests come along with their provenance
    assert list(new.tests.exclude(pk=added.pk).values_list("kind", "generator")) == list(
        old.tests.values_list("kind", "generator"))


def test_a_suggested_input_the_validator_rejects_is_not_added():
    _, item, _ = _item()
    addition = _addition(item, "0 0 0\n")
    assert addition.status == "failed" and "rejects" in addition.error
    assert item.problem.suites.count() == 1


def test_a_suggested_input_without_two_agreeing_oracles_is_not_added():
    _, item, _ = _item(oracles=(ORACLE_A, WRONG_ORACLE))
    addition = _addition(item, "40 2\n")
    assert addition.status == "failed" and "agree" in addition.error
    assert item.problem.suites.filter(status="active").count() == 1 and item.problem.suites.count() == 1


def test_a_lower_ranked_pair_outvotes_a_wrong_first_oracle():
    from tests.review.test_studies_support import ORACLE_B
    _, item, _ = _item(oracles=(WRONG_ORACLE, ORACLE_A, ORACLE_B))
    addition = _addition(item, "40 2\n")
    assert addition.status == "done", addition.error
    added = addition.new_suite.tests.order_by("-ordinal").first()
    assert blob_text(added.output_sha256).strip() == "42" and added.oracle.reliability == 2


def test_an_input_already_in_the_suite_is_not_added_twice():
    _, item, _ = _item()
    addition = _addition(item, "1 2\n")
    assert addition.status == "failed" and "already" in addition.error


def test_an_addition_whose_base_suite_was_replaced_meanwhile_is_refused(monkeypatch):
    from review.studies import sandboxed

    _, item, _ = _item()
    real = sandboxed.suite_add_tests

    def replace_base_then_add(*, suite, tests):
        # another addition activates first, while this one is building
        TestSuite.objects.filter(pk=item.suite_id).update(status=TestSuite.Status.SUPERSEDED)
        return real(suite=suite, tests=tests)

    monkeypatch.setattr(sandboxed, "suite_add_tests", replace_base_then_add)
    addition = _addition(item, "40 2\n")
    assert addition.status == "failed" and "replaced meanwhile" in addition.error
    assert item.problem.suites.filter(status=TestSuite.Status.FAILED).count() == 1
