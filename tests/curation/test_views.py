"""Curation pages: who may read and who may change (maintainers, POST, CSRF), and the page flow
end to end with a real RQ sandbox worker: import, verify, select under three rules, download
each dataset and load it back with `datasets.load_dataset`."""

from __future__ import annotations

import csv
import io
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from curation.models import Completion, CurationJob, Selection
from curation.services import curation_job_import
from tests.conftest import REPO, checked_worker_argv, process_group_stop, worker_env
from tests.curation.helpers import build_world, known_completions, write_jsonl
from tests.factories import UserFactory, annotator, maintainer


def _job(tmp_path: Path) -> CurationJob:
    world = build_world()
    return curation_job_import(path=write_jsonl(tmp_path / "c.jsonl",
                                                [k.row for k in known_completions(world.problem.pid, 3)]))


def refused(response) -> None:
    """Anonymous visitors are sent to the login page (the site's middleware) or refused outright."""
    assert response.status_code == 403 or (
        response.status_code == 302 and response["Location"].startswith("/accounts/login/")), response


def _posts(job: CurationJob) -> list[tuple[str, dict[str, object]]]:
    return [
        ("/curation/import", {}),
        ("/curation/demo", {}),
        (f"/curation/{job.pk}/verify", {}),
        (f"/curation/{job.pk}/verify", {"resume": "1"}),
        (f"/curation/{job.pk}/judge", {"judge": "m"}),
        (f"/curation/{job.pk}/select", {"rule": "tau>=0.5"}),
    ]


@pytest.mark.django_db
def test_annotators_and_anonymous_users_cannot_change_anything(tmp_path: Path):
    job = _job(tmp_path)
    anonymous, reader = Client(), Client()
    reader.force_login(annotator())
    for url, data in _posts(job):
        assert reader.post(url, data).status_code == 403, url
        refused(anonymous.post(url, data))
    job.refresh_from_db()
    assert job.status == CurationJob.Status.IMPORTED and not Selection.objects.exists()
    assert CurationJob.objects.count() == 1
    # Reading: annotators yes, anonymous no.
    assert reader.get(f"/curation/{job.pk}/").status_code == 200
    assert reader.get("/curation/").status_code == 200
    refused(anonymous.get(f"/curation/{job.pk}/"))
    outsider = Client()
    outsider.force_login(UserFactory(username="nobody"))
    assert outsider.get("/curation/").status_code == 403


@pytest.mark.django_db
def test_state_changes_need_post_and_a_csrf_token(tmp_path: Path):
    job = _job(tmp_path)
    client = Client(enforce_csrf_checks=True)
    client.force_login(maintainer())
    for url, _ in _posts(job):
        # A GET changes nothing: it is sent to the page the form belongs to (303) or refused (405).
        assert client.get(url).status_code in (303, 405), url
        assert client.post(url, {}).status_code == 403, url  # no CSRF token
    job.refresh_from_db()
    assert job.status == CurationJob.Status.IMPORTED


@pytest.mark.django_db
def test_a_bad_upload_imports_nothing_and_says_why(tmp_path: Path):
    build_world()
    client = Client()
    client.force_login(maintainer())
    bad = io.BytesIO(b'{"problem_id": "nope", "code": "print(1)", "language": "python3"}\n')
    bad.name = "bad.jsonl"
    page = client.post("/curation/import", {"file": bad}, follow=True)
    assert "Nothing imported" in page.content.decode() and "no problem" in page.content.decode()
    assert not CurationJob.objects.exists()


@pytest.fixture
def sandbox_worker() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(checked_worker_argv("sandbox"), env=worker_env(),
                            cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield proc
    process_group_stop(proc)  # SIGTERM: the worker unregisters, as serve stops it


@pytest.fixture
def rq_queues(monkeypatch: pytest.MonkeyPatch) -> None:
    import django_rq.settings
    from django.conf import settings

    monkeypatch.setattr(django_rq.settings, "QUEUES", settings.RQ_QUEUES)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_page_runs_a_job_end_to_end_on_the_workers(tmp_path: Path, settings, sandbox_worker, rq_queues):
    from datasets import load_dataset

    settings.HARDTESTS_CURATION_CHUNK = 4  # several chunks, chained through the queue
    world = build_world()
    known = known_completions(world.problem.pid, 24, seed=11)
    client = Client()
    client.force_login(maintainer())
    upload = io.BytesIO(write_jsonl(tmp_path / "c.jsonl", [k.row for k in known]).read_bytes())
    upload.name = "samples.jsonl"
    page = client.post("/curation/import", {"file": upload, "origin": "generated", "extra_origin": "public"})
    job = CurationJob.objects.get()
    assert page.status_code == 302 and job.total == 24 and job.source_name == "samples.jsonl"
    client.post(f"/curation/{job.pk}/verify")
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.finished:
            break
        time.sleep(1)
    assert job.status == CurationJob.Status.VERIFIED, job.error
    status = client.get(f"/curation/{job.pk}/status", HTTP_HX_REQUEST="true")
    assert status.status_code == 286 and "24 of 24" in status.content.decode()
    right = {k.row["sample_index"]: k.right for k in known}
    for rule in ("tau>=0.6", "kind:hacking", "tau>=0.8 | origin:public"):
        assert client.post(f"/curation/{job.pk}/select", {"rule": rule}).status_code == 302
    assert Selection.objects.filter(job=job).count() == 3
    detail = client.get(f"/curation/{job.pk}/").content.decode()
    assert "Kept by tau" in detail and "<svg" in detail and "tau&gt;=0.6" in detail
    for selection in Selection.objects.filter(job=job):
        archive = client.get(f"/curation/{job.pk}/selection/{selection.pk}/download")
        folder = tmp_path / f"ds-{selection.pk}"
        zipfile.ZipFile(io.BytesIO(archive.content)).extractall(folder)
        data = load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "hf-cache"))
        assert data.num_rows == selection.kept > 0
        assert {"prompt", "completion", "problem", "pass_fraction", "judge_score", "rule"} <= set(data.column_names)
        assert set(data["rule"]) == {selection.label}
        kept = {Completion.objects.get(pk=pk).sample_index for pk in selection.kept_ids}
        if selection.label == "tau>=0.6":
            assert kept == {i for i, r in right.items() if len(r) >= 6}
            assert sorted(data["pass_fraction"]) == sorted(len(right[i]) / 10 for i in kept)
    table = client.get(f"/curation/{job.pk}/table/tau.csv").content.decode()
    rows = list(csv.reader(io.StringIO(table)))
    assert rows[0][:3] == ["tau", "kept", "share"]
    by_tau = {float(r[0]): int(r[1]) for r in rows[1:]}
    assert by_tau == {t: sum(len(r) >= round(t * 10) for r in right.values()) for t in (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)}
