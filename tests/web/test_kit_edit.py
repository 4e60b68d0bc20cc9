"""Kit editing: checked before saving, unchanged saves do nothing, failed runs marked, revert."""

from __future__ import annotations

import pytest
from django.test import Client

from generation.models import FailureReason, GenerationRun
from problems.models import TestKit
from tests.web.conftest import World

pytestmark = pytest.mark.django_db


def _edit(client: Client, world: World, validator: str, judge: str | None = None, *, follow: bool = False):
    return client.post(f"/problems/{world.problem.pk}/kit/edit/", {
        "validator_code": validator, "judge_code": world.kit.output_judge.code if judge is None else judge,
        "note": "", "kit_version": world.kit.version,
    }, follow=follow)


def _refused(response, world: World) -> str:
    """A refused edit posted without htmx lands back on the Kit tab's own address (post/redirect/get)."""
    assert response.redirect_chain == [(f"/problems/{world.problem.pk}/kit/", 303)]
    assert response.status_code == 200
    return response.content.decode()


def _counts(world: World) -> tuple[int, int]:
    return TestKit.objects.filter(problem=world.problem).count(), GenerationRun.objects.count()


@pytest.mark.parametrize(("code", "reason"), [
    ("def validate_input(s)\n    return True\n", "Validator: syntax error on line 1"),
    ("def check(s):\n    return True\n", "Validator: defines no top-level function validate_input()"),
])
def test_broken_validator_is_refused_before_saving_and_keeps_the_typed_code(
        maintainer_client: Client, world: World, code: str, reason: str) -> None:
    before = _counts(world)
    html = _refused(_edit(maintainer_client, world, code, follow=True), world)
    assert reason in html
    assert "def check(s)" in html or "def validate_input(s)" in html  # the typed code is still there
    assert _counts(world) == before


def test_validator_that_rejects_a_sample_is_refused_in_the_sandbox(maintainer_client: Client, world: World) -> None:
    world.problem.samples = [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}]
    world.problem.save()
    before = _counts(world)
    html = _refused(_edit(maintainer_client, world, "def validate_input(s):\n    return s.startswith('1')\n",
                          follow=True), world)
    assert "Validator rejects sample 2 (returned False)" in html and "s.startswith(&#x27;1&#x27;)" in html
    assert "sample 1" not in html
    html = _refused(_edit(maintainer_client, world, "def validate_input(s):\n    return True\n",
                          judge="def output_judging_function(i, c, r):\n    raise ValueError('boom')\n",
                          follow=True), world)
    assert "Judging function failed on sample 1" in html
    # Shown once: the tab's address again is the current kit.
    assert "Judging function failed" not in maintainer_client.get(f"/problems/{world.problem.pk}/kit/").content.decode()
    assert _counts(world) == before
    # A good edit still passes the same check and is saved.
    assert _edit(maintainer_client, world, "def validate_input(s):\n    return len(s) > 0\n").status_code == 302
    assert _counts(world) == (before[0] + 1, before[1] + 1)


def test_unchanged_save_makes_no_version_and_says_so(maintainer_client: Client, world: World) -> None:
    before = _counts(world)
    # Browsers send CRLF line ends; that is not a change.
    response = _edit(maintainer_client, world, world.kit.validator.code.replace("\n", "\r\n"))
    assert response.status_code == 302 and response["Location"] == f"/problems/{world.problem.pk}/kit/"
    assert _counts(world) == before
    html = maintainer_client.get(response["Location"]).content.decode()
    assert f"Nothing changed: kit v{world.kit.version} is kept and no run was started." in html


def test_kit_whose_run_failed_is_marked_and_can_be_reverted(maintainer_client: Client, world: World) -> None:
    good_code = world.kit.validator.code
    assert _edit(maintainer_client, world, "def validate_input(s):\n    return len(s) < 7\n").status_code == 302
    edited = TestKit.objects.filter(problem=world.problem).order_by("-version").first()
    GenerationRun.objects.filter(kit=edited).update(status=GenerationRun.Status.FAILED,
                                                    failure_reason=FailureReason.NO_VALID_ORACLE)
    html = maintainer_client.get(f"/problems/{world.problem.pk}/kit/").content.decode()
    assert "The run of this kit failed" in html and "✗ run failed" in html
    assert f"Revert to v{world.kit.version}" in html
    response = maintainer_client.post(f"/problems/{world.problem.pk}/kit/revert/{world.kit.version}/")
    latest = TestKit.objects.filter(problem=world.problem).order_by("-version").first()
    run = GenerationRun.objects.order_by("-pk").first()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert latest.version == edited.version + 1 and latest.validator.code == good_code
    assert latest.validator_id == world.kit.validator_id and run.kit_id == latest.pk and run.mode == "from_kit"


def test_revert_is_refused_to_others(annotator_client: Client, client: Client, world: World) -> None:
    url = f"/problems/{world.problem.pk}/kit/revert/{world.kit.version}/"
    assert annotator_client.post(url).status_code == 403
    assert "/accounts/login/" in client.post(url)["Location"]
    assert TestKit.objects.filter(problem=world.problem).count() == 1
