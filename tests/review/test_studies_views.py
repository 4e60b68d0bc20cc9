"""Study pages over HTTP: blindness as an annotator, permissions, labelling, results, export."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from problems.models import InputValidator, TestKit
from review.models import Adjudication, Annotation, Study, ValidatorTrial
from review.studies import assignment, outcomes, services
from review.studies.services import Labels
from tests.factories import annotator, maintainer
from tests.review.test_studies_support import LOOSE_VALIDATOR, make_problem, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

SECRET_COMMENT = "bob-thinks-the-bound-is-wrong-7f3a"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def world():
    m = maintainer()
    alice, bob, carol = annotator("alice"), annotator("bob"), annotator("carol")
    problems = [make_problem(validator=LOOSE_VALIDATOR) for _ in range(2)]
    study = make_study(problems=problems, annotators=[alice, bob], created_by=m, overlap=2,
                       guidelines="Label **carefully**. <script>alert(1)</script>")
    return {"m": m, "alice": alice, "bob": bob, "carol": carol, "study": study}


def _bob_labels(study, bob):
    annotation = assignment.item_next(study=study, user=bob)
    services.annotation_submit(
        annotation=annotation,
        labels=Labels(validator_label="incorrect", validator_reason="wrong_bound", counterexample="-5 3",
                      suite_label="incomplete", missing_cases="no negative numbers", comment=SECRET_COMMENT),
        elapsed_ms=4000,
    )
    return annotation


# --- blindness ----------------------------------------------------------------------------


def test_annotator_does_not_see_other_labels_on_the_item_page(world):
    study, alice, bob = world["study"], world["alice"], world["bob"]
    bob_annotation = _bob_labels(study, bob)
    client = _client(alice)
    response = client.post(reverse("studies:next", args=[study.pk]))
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    body = page.content.decode()
    assert f"/items/{bob_annotation.item_id}/" in response["Location"]  # the same item bob labelled
    assert SECRET_COMMENT not in body and "no negative numbers" not in body and "bob" not in body.lower()
    assert "wrong_bound" not in body.replace('value="wrong_bound"', "")  # only the radio value, unchecked
    assert 'value="incorrect" data-shortcut="2" checked' not in body


def test_annotator_cannot_see_results_or_export_until_closed_or_opened(world):
    study, alice, bob, m = world["study"], world["alice"], world["bob"], world["m"]
    _bob_labels(study, bob)
    client = _client(alice)
    urls = [reverse(name, args=[study.pk]) for name in ("studies:results", "studies:export_csv", "studies:export_jsonl")]
    for url in urls:
        assert client.get(url).status_code == 403, url
    detail = client.get(reverse("studies:detail", args=[study.pk])).content.decode()
    assert "results-link" not in detail and "labels_submitted" not in detail
    # another annotator's item review page and labels stay hidden
    item = study.items.first()
    assert client.get(reverse("studies:review_item", args=[study.pk, item.pk])).status_code == 403
    assert client.get(reverse("studies:annotate", args=[study.pk, item.pk])).status_code == 404

    _client(m).post(reverse("studies:results_visibility", args=[study.pk]), {"opened": "1"})
    results = client.get(urls[0])
    assert results.status_code == 200 and SECRET_COMMENT in results.content.decode()
    _client(m).post(reverse("studies:results_visibility", args=[study.pk]), {"opened": "0"})
    assert client.get(urls[0]).status_code == 403
    _client(m).post(reverse("studies:close", args=[study.pk]))
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_annotator_cannot_poll_someone_elses_trial(world):
    study, alice, bob = world["study"], world["alice"], world["bob"]
    held = assignment.item_next(study=study, user=bob)
    trial = services.trial_start(item=held.item, user=bob, text="-5 3\n")
    assert _client(alice).get(reverse("studies:trial", args=[trial.pk])).status_code == 404
    assert _client(bob).get(reverse("studies:trial", args=[trial.pk])).status_code == 200


def test_annotators_see_only_their_studies(world):
    study, carol = world["study"], world["carol"]
    draft = make_study(problems=[make_problem()], annotators=[carol], open_it=False, name="draft for carol")
    client = _client(carol)
    listing = client.get(reverse("studies:list")).content.decode()
    assert study.name not in listing and "draft for carol" not in listing
    assert client.get(reverse("studies:detail", args=[study.pk])).status_code == 404
    assert client.get(reverse("studies:detail", args=[draft.pk])).status_code == 404
    assert client.post(reverse("studies:next", args=[study.pk])).status_code == 404
    alice_listing = _client(world["alice"]).get(reverse("studies:list")).content.decode()
    assert study.name in alice_listing
    assert "draft for carol" in _client(world["m"]).get(reverse("studies:list")).content.decode()


def test_guidelines_markdown_is_sanitised(world):
    page = _client(world["alice"]).get(reverse("studies:detail", args=[world["study"].pk])).content.decode()
    assert "<strong>carefully</strong>" in page
    assert "<script>alert(1)</script>" not in page


# --- permissions on every state-changing view --------------------------------------------


def _state_changing(study, item) -> list[tuple[str, dict]]:
    s, i = study.pk, item.pk
    return [
        (reverse("studies:create"), {"name": "x", "questions": "both", "selection": "filter", "overlap": 1}),
        (reverse("studies:edit", args=[s]), {"name": "renamed", "questions": "both", "selection": "filter",
                                             "overlap": 2}),
        (reverse("studies:open", args=[s]), {}),
        (reverse("studies:close", args=[s]), {}),
        (reverse("studies:results_visibility", args=[s]), {"opened": "1"}),
        (reverse("studies:release_idle", args=[s]), {}),
        (reverse("studies:adjudicate", args=[s, i]), {"validator_label": "correct"}),
        (reverse("studies:validator_edit", args=[s, i]), {"code": "def validate_input(s):\n    return False\n"}),
        (reverse("studies:add_test", args=[s, i]), {"input": "4 5\n"}),
    ]


def _labeller_views(study, item) -> list[tuple[str, dict]]:
    s, i = study.pk, item.pk
    return [
        (reverse("studies:next", args=[s]), {}),
        (reverse("studies:label", args=[s, i]), {"validator_label": "correct", "suite_label": "complete"}),
        (reverse("studies:skip", args=[s, i]), {}),
        (reverse("studies:resume", args=[s, i]), {}),
        (reverse("studies:try", args=[s, i]), {"input": "1 2\n"}),
    ]


def _snapshot():
    return (
        list(Study.objects.values_list("name", "status", "results_opened")),
        Annotation.objects.count(), Adjudication.objects.count(), InputValidator.objects.count(),
        ValidatorTrial.objects.count(), TestKit.objects.count(),
    )


def test_annotator_is_refused_every_maintainer_action(world):
    study, alice = world["study"], world["alice"]
    item = study.items.first()
    client = _client(alice)
    before = _snapshot()
    for url, data in _state_changing(study, item):
        assert client.post(url, data).status_code == 403, url
    assert _snapshot() == before


def test_anonymous_is_refused_everything(world):
    study = world["study"]
    item = study.items.first()
    client = Client()
    before = _snapshot()
    for url, data in _state_changing(study, item) + _labeller_views(study, item):
        response = client.post(url, data)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    for name in ("studies:list", "studies:results", "studies:export_csv"):
        url = reverse(name, args=[study.pk] if name != "studies:list" else [])
        assert "/accounts/login/" in client.get(url)["Location"]
    assert _snapshot() == before


def test_anonymous_reads_with_public_read_still_see_no_study(world, settings):
    settings.HARDTESTS_PUBLIC_READ = True
    study = world["study"]
    client = Client()
    assert client.get(reverse("studies:detail", args=[study.pk])).status_code == 404
    assert client.get(reverse("studies:results", args=[study.pk])).status_code == 404
    assert study.name not in client.get(reverse("studies:list")).content.decode()


def test_non_member_annotator_cannot_label_and_a_get_goes_to_the_page(world):
    study, carol = world["study"], world["carol"]
    item = study.items.first()
    client = _client(carol)
    for url, data in _labeller_views(study, item):
        assert client.post(url, data).status_code in (403, 404), url
    detail = reverse("studies:detail", args=[study.pk])
    for user, name in ((world["alice"], "studies:next"), (world["m"], "studies:open")):
        response = _client(user).get(reverse(name, args=[study.pk]))
        assert response.status_code == 303 and response["Location"] == detail


def test_csrf_is_required_for_posts(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world["m"])
    assert client.post(reverse("studies:close", args=[world["study"].pk])).status_code == 403
    world["study"].refresh_from_db()
    assert world["study"].status == Study.Status.OPEN


# --- maintainers manage studies ----------------------------------------------------------


def test_maintainer_creates_edits_and_opens_a_study_in_the_ui():
    m, a, b = maintainer(), annotator("alice"), annotator("bob")
    problems = [make_problem(), make_problem()]
    client = _client(m)
    assert client.get(reverse("studies:create")).status_code == 200
    data = {
        "name": "Pilot", "guidelines": "Be *careful*", "questions": "both", "selection": "list",
        "problem_list": f"{problems[0].pid}\n{problems[1].pk}\n", "overlap": 2, "seed": 5,
        "annotators": [a.pk],
    }
    refused = client.post(reverse("studies:create"), data)
    assert refused.status_code == 200 and "Overlap 2 needs at least 2 annotators; 1 is chosen." in refused.content.decode()
    assert not Study.objects.exists()
    response = client.post(reverse("studies:create"), {**data, "annotators": [a.pk, b.pk]})
    assert response.status_code == 302, response.content.decode()[:2000]
    study = Study.objects.get(name="Pilot")
    assert study.status == Study.Status.DRAFT and study.seed == 5
    assert set(study.problems.all()) == set(problems) and list(study.annotators.order_by("username")) == [a, b]
    assert client.get(reverse("studies:edit", args=[study.pk])).status_code == 200
    response = client.post(reverse("studies:edit", args=[study.pk]), {
        "name": "Pilot 2", "guidelines": "", "questions": "validator", "selection": "list",
        "problem_list": problems[0].pid, "overlap": 1, "annotators": [a.pk],
    })
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.name, study.questions, study.overlap, study.problems.count()) == ("Pilot 2", "validator", 1, 1)
    assert client.post(reverse("studies:open", args=[study.pk])).status_code == 302
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.items.count() == 1
    # once open, the overlap is fixed even if a form says otherwise
    client.post(reverse("studies:edit", args=[study.pk]), {"name": "Pilot 3", "overlap": 5, "annotators": [a.pk]})
    study.refresh_from_db()
    assert study.name == "Pilot 3" and study.overlap == 1
    detail = client.get(reverse("studies:detail", args=[study.pk])).content.decode()
    assert "Close the study" in detail
    released = client.post(reverse("studies:release_idle", args=[study.pk]), follow=True)
    assert "Released 0 items" in released.content.decode()


def test_overlap_zero_is_a_form_error_not_a_database_error():
    a = annotator("alice")
    response = _client(maintainer()).post(reverse("studies:create"), {
        "name": "x", "questions": "both", "selection": "filter", "overlap": 0, "annotators": [a.pk],
    })
    assert response.status_code == 200 and "Overlap must be at least 1." in response.content.decode()
    assert not Study.objects.exists()


def test_study_form_lists_only_annotators_and_offers_filters_as_choices():
    m, a = maintainer("boss"), annotator("alice")
    make_problem()
    html = _client(m).get(reverse("studies:create")).content.decode()
    annotators = html.split("<legend>Annotators</legend>")[1].split("</fieldset>")[0]
    assert "alice" in annotators and "boss" not in annotators and a.pk
    assert '<select name="filter_platform"' in html and '<option value="" selected>Any platform</option>' in html
    assert '<select name="filter_tag"' in html and '<select name="filter_source"' in html


def test_unknown_problem_in_the_list_is_a_form_error():
    client = _client(maintainer())
    response = client.post(reverse("studies:create"), {
        "name": "x", "questions": "both", "selection": "list", "problem_list": "nope/1", "overlap": 1,
    })
    assert response.status_code == 200 and "unknown problem" in response.content.decode()


# --- labelling over HTTP -----------------------------------------------------------------


def test_label_submit_moves_to_the_next_item_and_records_time(world):
    study, alice = world["study"], world["alice"]
    client = _client(alice)
    first = client.post(reverse("studies:next", args=[study.pk]))["Location"]
    page = client.get(first).content.decode()
    assert "Is the validator correct?" in page and "<kbd>1</kbd>" in page and 'class="highlight"' in page
    assert "Hacking (HackGen)" in page and "2000000000" in page
    item_pk = int(first.rstrip("/").split("/")[-1])
    # Refused: post/redirect/get back to the item, with what was typed and the reason.
    bad = client.post(reverse("studies:label", args=[study.pk, item_pk]),
                      {"validator_label": "incorrect", "comment": "kept across the redirect"}, follow=True)
    assert bad.redirect_chain == [(first, 303)]
    assert "say why" in bad.content.decode() and "kept across the redirect" in bad.content.decode()
    htmx = client.post(reverse("studies:label", args=[study.pk, item_pk]), {"validator_label": "incorrect"},
                       HTTP_HX_REQUEST="true")
    assert htmx.status_code == 422 and "say why" in htmx.content.decode()
    response = client.post(reverse("studies:label", args=[study.pk, item_pk]), {
        "validator_label": "incorrect", "validator_reason": "wrong_bound", "counterexample": "-5 3\r\n",
        "suite_label": "complete", "comment": "hi", "elapsed_ms": "12345",
    })
    assert response.status_code == 302 and response["Location"] != first
    annotation = Annotation.objects.get(annotator=alice, item_id=item_pk)
    assert annotation.status == Annotation.Status.SUBMITTED
    assert annotation.counterexample == "-5 3\n"  # CRLF from the browser normalised
    assert annotation.time_spent_ms == 12345
    # not checked on the page: a check was queued for it
    assert ValidatorTrial.objects.filter(user=alice, input="-5 3\n", purpose="counterexample").exists()


def test_skip_over_http_then_resume_from_the_study_page(world):
    study, alice = world["study"], world["alice"]
    client = _client(alice)
    first = client.post(reverse("studies:next", args=[study.pk]))["Location"]
    item_pk = int(first.rstrip("/").split("/")[-1])
    second = client.post(reverse("studies:skip", args=[study.pk, item_pk]), {"elapsed_ms": "10"})["Location"]
    assert second != first
    assert client.get(first).status_code == 404  # a skipped item is not open to label until resumed
    detail = client.get(reverse("studies:detail", args=[study.pk])).content.decode()
    assert "Label it now" in detail
    resumed = client.post(reverse("studies:resume", args=[study.pk, item_pk]))
    assert resumed.status_code == 302 and resumed["Location"] == first


def test_trial_endpoint_returns_a_polling_partial_then_286(world):
    study, alice = world["study"], world["alice"]
    held = assignment.item_next(study=study, user=alice)
    client = _client(alice)
    response = client.post(reverse("studies:try", args=[study.pk, held.item_id]), {"input": "1 2\r\n"},
                           HTTP_HX_REQUEST="true")
    body = response.content.decode()
    trial = ValidatorTrial.objects.get()
    assert trial.input == "1 2\n" and 'hx-trigger="every 500ms"' in body
    poll = client.get(reverse("studies:trial", args=[trial.pk]))
    assert poll.status_code == 200
    outcomes.trial_record(trial=trial, accepted=True)
    done = client.get(reverse("studies:trial", args=[trial.pk]))
    assert done.status_code == 286 and "accepts" in done.content.decode() and "hx-trigger" not in done.content.decode()


# --- results, adjudication, export ---------------------------------------------------------


def _all_label(study, alice, bob):
    for user, label in ((alice, "correct"), (bob, "incorrect")):
        while (annotation := assignment.item_next(study=study, user=user)) is not None:
            services.annotation_submit(annotation=annotation, labels=Labels(
                validator_label=label, validator_reason="wrong_bound" if label == "incorrect" else "",
                counterexample="-5 3\n" if label == "incorrect" else "", suite_label="complete",
                comment="=HYPERLINK(\"x\")",
            ), elapsed_ms=1000)


def test_results_page_shows_rates_agreement_and_disagreements(world):
    study, alice, bob, m = world["study"], world["alice"], world["bob"], world["m"]
    _all_label(study, alice, bob)
    page = _client(m).get(reverse("studies:results", args=[study.pk])).content.decode()
    assert "Validator correct" in page and "Suite complete" in page
    assert "Fleiss" in page and "Krippendorff" in page and "Cohen" in page and "alice × bob" in page
    assert "undefined" in page  # everyone said "complete": the suite statistics are undefined
    assert page.count("Review &amp; adjudicate") >= 2
    # One agreement matrix per pair and question: alice said correct and bob incorrect on both items.
    assert "alice × bob: agree on 0 of 2" in page and "alice × bob: agree on 2 of 2" in page
    validator_matrix = page.split("alice × bob: agree on 0 of 2")[1].split("</table>")[0]
    cells = [int(n) for n in re.findall(r'<td class="num[^"]*">(\d+)</td>', validator_matrix)]
    assert sorted(cells, reverse=True)[:1] == [2] and sum(cells) == 2
    assert '<td class="num disagree">2</td>' in validator_matrix
    assert "How to read κ and α" in page and "0.6–0.8 substantial" in page


def test_adjudication_keeps_labels_and_records_a_regression_input(world):
    study, alice, bob, m = world["study"], world["alice"], world["bob"], world["m"]
    _all_label(study, alice, bob)
    item = study.items.order_by("position").first()
    client = _client(m)
    assert client.get(reverse("studies:review_item", args=[study.pk, item.pk])).status_code == 200
    response = client.post(reverse("studies:adjudicate", args=[study.pk, item.pk]), {
        "validator_label": "incorrect", "validator_reason": "wrong_bound", "counterexample": "-5 3\r\n",
        "suite_label": "complete", "note": "bob is right",
    })
    assert response.status_code == 302
    adjudication = Adjudication.objects.get(item=item)
    assert adjudication.regression_recorded and adjudication.validator_label == "incorrect"
    assert item.validator.__class__.objects.get(pk=item.validator.pk).regression_inputs == ["-5 3\n"]
    assert set(item.annotations.values_list("validator_label", flat=True)) == {"correct", "incorrect"}
    # a new version of the validator inherits the regression input
    from problems.services import validator_create
    assert validator_create(problem=item.problem, code="x", origin="edited").regression_inputs == ["-5 3\n"]


def test_too_strict_counterexamples_are_not_regression_inputs(world):
    item = world["study"].items.first()
    services.adjudication_set(item=item, user=world["m"], validator_label="incorrect",
                              validator_reason="too_strict_format", counterexample="1  2\n")
    item.validator.refresh_from_db()
    assert item.validator.regression_inputs == []


def test_export_has_every_label_as_csv_and_json_lines(world):
    study, alice, bob, m = world["study"], world["alice"], world["bob"], world["m"]
    _all_label(study, alice, bob)
    item = study.items.order_by("position").first()
    services.adjudication_set(item=item, user=m, validator_label="incorrect", validator_reason="wrong_bound",
                              counterexample="-5 3\n")
    client = _client(m)
    response = client.get(reverse("studies:export_csv", args=[study.pk]))
    assert response["Content-Disposition"].endswith('.csv"')
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 4 and {r["annotator"] for r in rows} == {"alice", "bob"}
    assert {r["final_validator_label"] for r in rows if r["item_number"] == "1"} == {"incorrect"}
    assert {r["item_index_0based"] for r in rows if r["item_number"] == "1"} == {"0"}
    assert all(r["comment"].startswith("'=") for r in rows)  # a spreadsheet will not run it as a formula
    lines = client.get(reverse("studies:export_jsonl", args=[study.pk])).content.decode().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 4 and records[0]["time_spent_ms"] == 1000
    assert {r["counterexample"] for r in records if r["annotator"] == "bob"} == {"-5 3\n"}


def test_validator_edit_from_an_item_makes_new_versions_and_rematerialises(world, monkeypatch):
    calls = []
    monkeypatch.setattr(services, "_rematerialise",
                        lambda *, problem, user: calls.append((problem, user)) or (None, "queued"))
    study, m = world["study"], world["m"]
    item = study.items.first()
    code = "def validate_input(s):\n    return len(s) > 0\n"  # accepts the samples (the edit is checked)
    response = _client(m).post(reverse("studies:validator_edit", args=[study.pk, item.pk]),
                               {"code": code, "note": "tighten"})
    assert response.status_code == 302
    newest = InputValidator.objects.filter(problem=item.problem).order_by("-version").first()
    assert newest.version == 2 and newest.code == code and newest.edited_by == m
    assert TestKit.objects.filter(problem=item.problem).order_by("-version").first().validator == newest
    assert calls == [(item.problem, m)]


def test_validator_edit_starts_a_from_kit_generation_run_with_the_new_kit(world):
    from generation.models import GenerationRun

    study, m = world["study"], world["m"]
    item = study.items.first()
    code = "def validate_input(s):\n    return len(s.split()) == 2\n"
    _client(m).post(reverse("studies:validator_edit", args=[study.pk, item.pk]), {"code": code, "note": "n"})
    run = GenerationRun.objects.get(problem=item.problem)
    newest_kit = TestKit.objects.filter(problem=item.problem).order_by("-version").first()
    assert run.mode == "from_kit" and run.kit == newest_kit and newest_kit.validator.code == code
    page = _client(m).get(reverse("studies:review_item", args=[study.pk, item.pk])).content.decode()
    assert reverse("generation:problem_runs", args=[item.problem.pk]) in page


def test_results_and_export_selectors_refuse_a_blind_annotator_too(world):
    from django.core.exceptions import PermissionDenied

    from review.studies import results

    study, alice = world["study"], world["alice"]
    for call in (lambda: results.study_results(study, viewer=alice), lambda: results.export_csv(study, viewer=alice),
                 lambda: results.export_jsonl(study, viewer=alice)):
        with pytest.raises(PermissionDenied):
            call()
    assert results.study_results(study, viewer=world["m"])["questions"]


def test_admin_pages_of_every_study_model_load(world, admin_client):
    from review.models import StudyItem, SuiteAddition

    study, bob, m = world["study"], world["bob"], world["m"]
    annotation = _bob_labels(study, bob)
    services.adjudication_set(item=annotation.item, user=m, validator_label="correct")
    services.suite_addition_start(item=annotation.item, user=m, text="4 5\n")
    for model in (Study, StudyItem, Annotation, Adjudication, ValidatorTrial, SuiteAddition):
        meta = model._meta
        assert admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")).status_code == 200
        obj = model.objects.first()
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
        assert admin_client.get(url).status_code == 200, url


def test_annotator_gets_a_styled_403_and_unknown_pages_a_styled_404():
    client = _client(annotator("alice"))
    response = client.get(reverse("studies:create"))
    html = response.content.decode()
    assert response.status_code == 403 and "<html" in html and "This page is for maintainers." in html
    missing = client.get("/problems/999999/")
    assert missing.status_code == 404 and "<html" in missing.content.decode()
    assert "Nothing here" in missing.content.decode()


def test_draft_study_can_be_deleted_but_an_open_one_cannot(world):
    m = world["m"]
    client = _client(m)
    draft = Study.objects.create(name="Scratch", created_by=m)
    response = client.post(reverse("studies:delete", args=[draft.pk]), follow=True)
    assert "Draft study “Scratch” deleted." in response.content.decode()
    assert not Study.objects.filter(pk=draft.pk).exists()
    opened = world["study"]
    response = client.post(reverse("studies:delete", args=[opened.pk]), follow=True)
    assert "Only a draft study can be deleted" in response.content.decode()
    assert Study.objects.filter(pk=opened.pk).exists()
    assert _client(annotator("bob")).post(reverse("studies:delete", args=[opened.pk])).status_code == 403


def test_opening_a_draft_with_fewer_annotators_than_the_overlap_is_refused(world):
    m = world["m"]
    draft = Study.objects.create(name="Thin", created_by=m, overlap=3)
    draft.annotators.add(annotator("solo"))
    response = _client(m).post(reverse("studies:open", args=[draft.pk]), follow=True)
    assert "Overlap 3 needs at least 3 annotators; 1 is chosen." in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == Study.Status.DRAFT


def test_draft_is_kept_on_the_server_and_restored_on_return(world):
    study, alice = world["study"], world["alice"]
    client = _client(alice)
    annotation = assignment.item_next(study=study, user=alice)
    url = reverse("studies:draft", args=[study.pk, annotation.item_id])
    response = client.post(url, {"validator_label": "incorrect", "validator_reason": "wrong_bound",
                                 "counterexample": "-5 3", "comment": "half-typed thought"})
    assert response.status_code == 204
    annotation.refresh_from_db()
    assert annotation.status == Annotation.Status.CLAIMED  # a draft is not a submission
    assert (annotation.validator_label, annotation.comment) == ("incorrect", "half-typed thought")
    html = client.get(reverse("studies:annotate", args=[study.pk, annotation.item_id])).content.decode()
    assert "half-typed thought" in html and 'value="incorrect" data-shortcut="2" checked' in html
    assert f'data-draft-url="{url}"' in html
    # Someone outside the study cannot write into alice's item (nor learn the study exists).
    assert _client(world["carol"]).post(url, {"comment": "x"}).status_code == 404
    annotation.refresh_from_db()
    assert annotation.comment == "half-typed thought"


def test_draft_of_a_submitted_label_is_refused(world):
    study, bob = world["study"], world["bob"]
    annotation = _bob_labels(study, bob)
    url = reverse("studies:draft", args=[study.pk, annotation.item_id])
    response = _client(bob).post(url, {"comment": "overwrite"})
    assert response.status_code == 409
    annotation.refresh_from_db()
    assert annotation.comment == SECRET_COMMENT


def test_my_queue_and_progress_bar_count_what_is_open_to_the_annotator(world):
    study, alice = world["study"], world["alice"]
    client = _client(alice)
    html = client.get(reverse("studies:queue")).content.decode()
    assert study.name in html and "0 of 2 labelled" in html and "Label the next item" in html
    annotation = assignment.item_next(study=study, user=alice)
    page = client.get(reverse("studies:annotate", args=[study.pk, annotation.item_id])).content.decode()
    assert "You have labelled <strong>0</strong> of <strong>2</strong> items open to you (0%)" in page
    html = client.get(reverse("studies:queue")).content.decode()
    assert f"Carry on with item {annotation.item.position + 1}" in html


def test_every_test_of_the_suite_is_reachable_by_paging(world):
    from problems.models import TestCase
    from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
    from review.studies.selectors import PREVIEW_TESTS_PER_KIND

    study, alice = world["study"], world["alice"]
    annotation = assignment.item_next(study=study, user=alice)
    item = annotation.item
    suite = suite_create(problem=item.problem, origin="generated")
    n = PREVIEW_TESTS_PER_KIND * 2 + 3
    suite_add_tests(suite=suite, tests=[NewTest(input=f"{i}\n", output=f"out{i}\n", kind=TestCase.Kind.HACKING,
                                                generator="gen_hacking_input_x", call_number=i) for i in range(n)])
    suite_activate(suite=suite)
    item.suite = suite
    item.save()
    client = _client(alice)
    url = reverse("studies:item_tests", args=[study.pk, item.pk])
    seen = set()
    for page in (1, 2, 3):
        html = client.get(url, {"kind": "hacking", "page": page}).content.decode()
        seen |= {i for i in range(n) if f">out{i}\n</pre>" in html}
    assert seen == set(range(n))
    assert "Page 3 of 3" in html
    page = client.get(reverse("studies:annotate", args=[study.pk, item.pk]), {"page_hacking": 3}).content.decode()
    assert f">out{n - 1}\n</pre>" in page


def test_validator_edit_from_an_item_is_checked_before_saving(world):
    study, m = world["study"], world["m"]
    item = study.items.order_by("position").first()
    before = InputValidator.objects.filter(problem=item.problem).count()
    url = reverse("studies:validator_edit", args=[study.pk, item.pk])
    page = reverse("studies:review_item", args=[study.pk, item.pk])
    # Refused: back to the item's page (post/redirect/get) with the typed code and the reason, once.
    response = _client(m).post(url, {"code": "def check(s):\n    return True\n", "note": ""}, follow=True)
    assert response.redirect_chain == [(page, 303)]
    html = response.content.decode()
    assert html.count("Validator: defines no top-level function validate_input()") == 1 and "def check(s)" in html
    assert "defines no top-level function" not in _client(m).get(page).content.decode()
    htmx = _client(m).post(url, {"code": "def check(s):\n    return True\n", "note": ""}, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 422 and "defines no top-level function validate_input()" in htmx.content.decode()
    response = _client(m).post(url, {"code": InputValidator.objects.filter(problem=item.problem).order_by("-version").first().code,
                                     "note": ""},
                               follow=True)
    assert "Nothing changed" in response.content.decode()
    assert InputValidator.objects.filter(problem=item.problem).count() == before
