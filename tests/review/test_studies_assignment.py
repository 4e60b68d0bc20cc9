"""Assignment: overlap, no repeats, skip, resume, seeded order, and concurrency safety."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from problems.models import TestSuite
from review.models import Annotation, Study, StudyItem
from review.studies import assignment, services
from review.studies.services import Labels
from tests.factories import ProblemFactory, annotator, maintainer
from tests.review.test_studies_support import ensure_roles, make_problem, make_study

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _submit(annotation: Annotation) -> None:
    services.annotation_submit(annotation=annotation, labels=Labels(validator_label="correct", suite_label="complete"),
                               elapsed_ms=1000)


def _order(study: Study) -> list[int]:
    return list(study.items.order_by("position").values_list("problem_id", flat=True))


def test_overlap_caps_the_annotators_per_item():
    problems = [make_problem() for _ in range(3)]
    a, b, c = annotator("a"), annotator("b"), annotator("c")
    study = make_study(problems=problems, annotators=[a, b, c], overlap=2)
    first = study.items.get(position=0)
    got_a = assignment.item_next(study=study, user=a)
    got_b = assignment.item_next(study=study, user=b)
    got_c = assignment.item_next(study=study, user=c)
    assert got_a.item == first and got_b.item == first
    assert got_c.item.position == 1  # the first item already has its two annotators
    first.refresh_from_db()
    assert first.claims == 2


def test_annotator_never_gets_an_item_they_labelled():
    problems = [make_problem() for _ in range(3)]
    a = annotator("a")
    study = make_study(problems=problems, annotators=[a], overlap=1)
    seen = []
    while (annotation := assignment.item_next(study=study, user=a)) is not None:
        assert annotation.item_id not in seen
        seen.append(annotation.item_id)
        _submit(annotation)
    assert seen == list(study.items.order_by("position").values_list("pk", flat=True))
    assert assignment.item_next(study=study, user=a) is None


def test_resume_returns_the_item_already_held():
    study = make_study(problems=[make_problem(), make_problem()], annotators=[annotator("a")], overlap=1)
    a = study.annotators.get()
    first = assignment.item_next(study=study, user=a)
    again = assignment.item_next(study=study, user=a)
    assert first.pk == again.pk and Annotation.objects.count() == 1


def test_skip_frees_the_slot_and_moves_on_then_the_item_can_be_resumed():
    problems = [make_problem() for _ in range(2)]
    a, b = annotator("a"), annotator("b")
    study = make_study(problems=problems, annotators=[a, b], overlap=1)
    held = assignment.item_next(study=study, user=a)
    assert assignment.item_skip(annotation=held, elapsed_ms=1500)
    held.refresh_from_db()
    assert held.status == Annotation.Status.SKIPPED and held.time_spent_ms == 1500
    assert StudyItem.objects.get(pk=held.item_id).claims == 0
    # a moves on to the next item, never back to the skipped one
    nxt = assignment.item_next(study=study, user=a)
    assert nxt.item_id != held.item_id
    # the freed slot goes to b
    assert assignment.item_next(study=study, user=b).item_id == held.item_id
    assert [s.item_id for s in assignment.skipped_items(study=study, user=a)] == [held.item_id]
    # b holds the only slot, so a cannot resume it yet
    assert not assignment.item_resume_skipped(annotation=held)
    _submit(nxt)
    b_annotation = Annotation.objects.get(annotator=b)
    assignment.item_skip(annotation=b_annotation)
    assert assignment.item_resume_skipped(annotation=held)
    held.refresh_from_db()
    assert held.status == Annotation.Status.CLAIMED
    assert assignment.item_next(study=study, user=a).pk == held.pk  # resume: the held item comes first


def test_skipping_twice_does_not_free_two_slots():
    study = make_study(problems=[make_problem()], annotators=[annotator("a")], overlap=1)
    held = assignment.item_next(study=study, user=study.annotators.get())
    assert assignment.item_skip(annotation=held)
    assert not assignment.item_skip(annotation=held)
    assert StudyItem.objects.get().claims == 0


def test_order_is_reproducible_from_the_seed():
    problems = [make_problem() for _ in range(8)]
    users = [annotator("a")]
    one = make_study(problems=problems, annotators=users, seed=42, name="one")
    two = make_study(problems=problems, annotators=users, seed=42, name="two")
    other = make_study(problems=problems, annotators=users, seed=43, name="other")
    assert _order(one) == _order(two)
    assert _order(one) != _order(other)  # 8! orders: a collision would be a 1-in-40320 accident
    assert sorted(_order(one)) == sorted(p.pk for p in problems)
    # and annotators are offered items in that order
    assert assignment.item_next(study=one, user=users[0]).item.problem_id == _order(one)[0]


def test_a_stale_read_cannot_push_an_item_past_its_overlap():
    study = make_study(problems=[make_problem()], annotators=[annotator("a"), annotator("b")], overlap=1)
    a, b = study.annotators.order_by("username")
    stale = StudyItem.objects.get()  # read while claims == 0
    assert assignment.item_next(study=study, user=a) is not None
    assert assignment._take(stale, b, study.overlap) is None
    assert StudyItem.objects.get().claims == 1


def test_a_double_request_by_one_annotator_holds_one_slot():
    study = make_study(problems=[make_problem()], annotators=[annotator("a")], overlap=2)
    a = study.annotators.get()
    item = StudyItem.objects.get()
    assert assignment._take(item, a, 2) is not None
    assert assignment._take(item, a, 2) is None  # unique (item, annotator): the increment rolls back
    assert StudyItem.objects.get().claims == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_never_exceed_the_overlap():
    ensure_roles()
    study = make_study(problems=[make_problem(), make_problem()], annotators=[], overlap=2)
    users = [annotator(f"c{i}") for i in range(6)]
    study.annotators.set(users)
    barrier = threading.Barrier(len(users))
    got: dict[str, int | None] = {}
    errors: list[BaseException] = []

    def worker(user):
        try:
            barrier.wait()
            annotation = assignment.item_next(study=study, user=user)
            got[user.username] = annotation.item.position if annotation else None
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    positions = list(got.values())
    assert positions.count(0) == 2 and positions.count(1) == 2 and positions.count(None) == 2
    for item in StudyItem.objects.all():
        assert item.claims == item.annotations.count() == 2


def test_opening_freezes_items_pinned_to_the_current_validator_and_suite():
    good = make_problem()
    no_validator = make_problem(with_validator=False)
    no_suite = make_problem(with_suite=False)
    m = maintainer()
    study = make_study(problems=[good, no_validator, no_suite], annotators=[annotator("a")], created_by=m)
    item = study.items.get()
    assert item.problem == good
    assert item.validator.version == 1
    assert item.suite == good.suites.get(status=TestSuite.Status.ACTIVE)
    suite_only = make_study(problems=[good, no_validator, no_suite], annotators=[], questions="suite", name="s")
    assert set(suite_only.items.values_list("problem_id", flat=True)) == {good.pk, no_validator.pk}
    validator_only = make_study(problems=[good, no_validator, no_suite], annotators=[], questions="validator",
                                name="v")
    assert set(validator_only.items.values_list("problem_id", flat=True)) == {good.pk, no_suite.pk}


def test_filter_selection_is_resolved_when_opening():
    chosen = [make_problem(title=f"Sum {i}") for i in range(3)]
    make_problem(title="Other")
    ProblemFactory(title="Sum without anything")  # no validator, no suite: left out
    study = services.study_create(name="f", created_by=None, selection=Study.Selection.FILTER,
                                  problem_filter={"search": "Sum", "source": "test"}, overlap=1, seed=1)
    study = services.study_open(study=study)
    assert set(study.items.values_list("problem_id", flat=True)) == {p.pk for p in chosen}


def test_opening_with_nothing_to_label_is_refused_and_stays_draft():
    study = services.study_create(name="empty", created_by=None, selection=Study.Selection.LIST, problems=[])
    with pytest.raises(services.StudyStateError):
        services.study_open(study=study)
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT and study.items.count() == 0


def test_next_is_refused_unless_the_study_is_open():
    study = make_study(problems=[make_problem()], annotators=[annotator("a")], open_it=False)
    with pytest.raises(assignment.AssignmentError):
        assignment.item_next(study=study, user=study.annotators.get())


def test_taking_an_annotator_off_a_study_gives_back_their_claims_and_keeps_their_labels():
    a, b = annotator("a"), annotator("b")
    study = make_study(problems=[make_problem(), make_problem()], annotators=[a, b], overlap=1)
    done = assignment.item_next(study=study, user=b)
    _submit(done)
    held = assignment.item_next(study=study, user=b)
    services.study_update(study=study, annotators=[a])
    assert not Annotation.objects.filter(pk=held.pk).exists()
    assert StudyItem.objects.get(pk=held.item_id).claims == 0
    assert Annotation.objects.get(pk=done.pk).status == Annotation.Status.SUBMITTED
    assert assignment.item_next(study=study, user=a).item_id == held.item_id


def test_has_work_tells_whether_next_would_give_something():
    a, b = annotator("a"), annotator("b")
    study = make_study(problems=[make_problem()], annotators=[a, b], overlap=1)
    assert assignment.has_work(study=study, user=a) and assignment.has_work(study=study, user=b)
    held = assignment.item_next(study=study, user=a)
    assert assignment.has_work(study=study, user=a)  # resume
    assert not assignment.has_work(study=study, user=b)  # the only slot is taken
    _submit(held)
    assert not assignment.has_work(study=study, user=a)


def test_idle_claims_can_be_released_so_others_can_label():
    from datetime import timedelta

    from django.utils import timezone

    a, b = annotator("a"), annotator("b")
    study = make_study(problems=[make_problem()], annotators=[a, b], overlap=1)
    held = assignment.item_next(study=study, user=a)
    assert services.study_release_idle_claims(study=study, idle_hours=24) == 0  # just opened
    Annotation.objects.filter(pk=held.pk).update(last_viewed_at=timezone.now() - timedelta(hours=25))
    assert services.study_release_idle_claims(study=study, idle_hours=24) == 1
    assert StudyItem.objects.get().claims == 0
    assert assignment.item_next(study=study, user=b).item_id == held.item_id
