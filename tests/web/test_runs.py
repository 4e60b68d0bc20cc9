from __future__ import annotations

import pytest
from django.test import Client

from generation.models import GenerationRun
from problems.models import TestKit
from tests.web.conftest import World, htmx

pytestmark = pytest.mark.django_db


def test_runs_tab_lists_every_run(user_client: Client, world: World) -> None:
    html = user_client.get(f"/problems/{world.problem.pk}/runs/").content.decode()
    assert f"/runs/{world.run.pk}/" in html and "No valid oracle" in html and "fake-model" in html
    row = next(r for r in html.split("<tr>") if f">#{world.run.pk}</a>" in r)
    assert "Succeeded" in row and '<td class="num">2</td>' in row  # its status and the 2 tests it kept


def test_run_page_full_and_progress_partial(user_client: Client, world: World) -> None:
    html = user_client.get(f"/runs/{world.run.pk}/").content.decode()
    assert "<html" in html and "Run #" in html and "LLM: validator and judge" in html
    assert "&lt;b&gt;line 2&lt;/b&gt;" in html  # the log is escaped
    assert "hx-trigger" not in html.split('id="run-progress"')[1].split(">")[0]  # finished: no polling
    finished = user_client.get(f"/runs/{world.run.pk}/progress/")
    assert finished.status_code == 286 and b"<html" not in finished.content
    via_target = user_client.get(f"/runs/{world.run.pk}/", **htmx("run-progress"))
    assert via_target.status_code == 286 and b"<html" not in via_target.content


def test_running_run_keeps_polling(user_client: Client, world: World) -> None:
    GenerationRun.objects.filter(pk=world.run.pk).update(status=GenerationRun.Status.RUNNING,
                                                         stage=GenerationRun.Stage.GENERATING)
    html = user_client.get(f"/runs/{world.run.pk}/").content.decode()
    assert 'hx-trigger="every 1s"' in html and "Running generators" in html
    response = user_client.get(f"/runs/{world.run.pk}/progress/")
    assert response.status_code == 200 and b'hx-trigger="every 1s"' in response.content


def test_cancel_button_only_while_running_and_only_for_maintainers(maintainer_client: Client, user_client: Client,
                                                                   world: World) -> None:
    url = f"/runs/{world.run.pk}/"
    assert b"Cancel run" not in maintainer_client.get(url).content  # finished
    GenerationRun.objects.filter(pk=world.run.pk).update(status=GenerationRun.Status.RUNNING)
    assert b"Cancel run" in maintainer_client.get(url).content
    assert b"Cancel run" not in user_client.get(url).content


def test_llm_call_prompt_and_reply_are_escaped(user_client: Client, world: World) -> None:
    url = f"/runs/{world.run.pk}/calls/{world.call.pk}/"
    html = user_client.get(url).content.decode()
    assert "<html" in html and "You write validators." in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>alert(2)</script>" not in html
    part = user_client.get(url, **htmx("llm-call")).content.decode()
    assert "<html" not in part and "You write validators." in part
    assert user_client.get(f"/runs/{world.run.pk + 1}/calls/{world.call.pk}/").status_code == 404


def test_cancel_is_for_maintainers(client: Client, annotator_client: Client, maintainer_client: Client,
                                   world: World) -> None:
    GenerationRun.objects.filter(pk=world.run.pk).update(status=GenerationRun.Status.RUNNING)
    url = f"/runs/{world.run.pk}/cancel/"
    assert annotator_client.post(url).status_code == 403
    assert "/accounts/login/" in client.post(url)["Location"]
    response = maintainer_client.get(url)  # the address typed again goes back to the run's page
    assert response.status_code == 303 and response["Location"] == url.rsplit("cancel/", 1)[0]
    response = maintainer_client.post(url)
    assert response.status_code == 302
    world.run.refresh_from_db()
    assert world.run.cancel_requested or world.run.status == GenerationRun.Status.CANCELLED


def test_regenerate_is_for_maintainers(client: Client, annotator_client: Client, world: World) -> None:
    url = f"/problems/{world.problem.pk}/regenerate/"
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(url, {"mode": "from_kit", "confirm": "on"}).status_code == 403
    assert "/accounts/login/" in client.post(url, {"mode": "from_kit", "confirm": "on"})["Location"]
    assert GenerationRun.objects.count() == 2


def test_regenerate_without_llm_says_so_and_offers_the_kit(maintainer_client: Client, world: World, settings) -> None:
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    html = maintainer_client.get(f"/problems/{world.problem.pk}/regenerate/").content.decode()
    assert "No LLM is configured" in html and 'value="from_kit"' in html and 'value="from_scratch"' not in html
    page = maintainer_client.get(f"/problems/{world.problem.pk}/").content.decode()
    assert "No LLM is configured" in page and "Regenerate with the LLM" not in page
    refused = maintainer_client.post(f"/problems/{world.problem.pk}/regenerate/",
                                     {"mode": "from_scratch", "model_name": "gpt-4o", "confirm": "on"})
    assert refused.status_code == 200 and GenerationRun.objects.count() == 2


def test_regenerate_needs_the_confirmation(maintainer_client: Client, world: World) -> None:
    response = maintainer_client.post(f"/problems/{world.problem.pk}/regenerate/", {"mode": "from_kit"})
    assert response.status_code == 200 and GenerationRun.objects.count() == 2


def test_regenerate_from_kit_starts_a_run(maintainer_client: Client, world: World) -> None:
    response = maintainer_client.post(f"/problems/{world.problem.pk}/regenerate/",
                                      {"mode": "from_kit", "confirm": "on"})
    run = GenerationRun.objects.order_by("-pk").first()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert run.mode == "from_kit" and run.status == GenerationRun.Status.QUEUED and run.kit_id == world.kit.pk


def test_regenerate_from_scratch_with_a_model_choice(maintainer_client: Client, world: World, settings) -> None:
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.HARDTESTS_LLM_MODELS = ["model-a", "model-b"]
    html = maintainer_client.get(f"/problems/{world.problem.pk}/regenerate/").content.decode()
    assert 'value="model-b"' in html and 'value="from_scratch"' in html
    response = maintainer_client.post(f"/problems/{world.problem.pk}/regenerate/",
                                      {"mode": "from_scratch", "model_name": "model-b", "confirm": "on"})
    run = GenerationRun.objects.order_by("-pk").first()
    assert response.status_code == 302 and run.mode == "from_scratch" and run.model_name == "model-b"


def test_kit_edit_makes_new_versions_and_rematerialises(maintainer_client: Client, world: World) -> None:
    new_code = "def validate_input(s):\n    return s.endswith('\\n')\n"
    response = maintainer_client.post(f"/problems/{world.problem.pk}/kit/edit/", {
        "validator_code": new_code, "judge_code": world.kit.output_judge.code, "note": "require a newline",
        "kit_version": world.kit.version,
    })
    kit = TestKit.objects.filter(problem=world.problem).order_by("-version").first()
    run = GenerationRun.objects.order_by("-pk").first()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert kit.version == world.kit.version + 1 and kit.validator.code == new_code
    assert kit.validator.edited_by.username == "maint" and kit.validator.change_note == "require a newline"
    assert kit.output_judge_id == world.kit.output_judge_id  # unchanged judge keeps its version
    assert run.mode == "from_kit" and run.kit_id == kit.pk
    html = maintainer_client.get(f"/problems/{world.problem.pk}/kit/").content.decode()
    assert "require a newline" in html and "maint" in html


def test_kit_edit_is_refused_to_others(client: Client, annotator_client: Client, user_client: Client,
                                       world: World) -> None:
    data = {"validator_code": "x", "judge_code": "", "note": "", "kit_version": world.kit.version}
    url = f"/problems/{world.problem.pk}/kit/edit/"
    assert annotator_client.post(url, data).status_code == 403
    assert user_client.post(url, data).status_code == 403
    assert "/accounts/login/" in client.post(url, data)["Location"]
    assert TestKit.objects.filter(problem=world.problem).count() == 1
