"""The evaluation page: the latest report in tables and chart data, and who may run one."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from review.models import EvaluationReport
from tests.factories import UserFactory, annotator, maintainer
from tests.review.test_eval_services import build_world, rq_queues, run_sync  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
URL = "/evaluation/"


def client_for(user: object) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_full_page_shows_tables_and_chart_data_of_the_latest_report():
    world = build_world()
    report = run_sync(pids=[world.problem.pid])
    response = client_for(annotator()).get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    for heading in ("By suite origin", "Precision and recall by difficulty", "Ablation by test kind",
                    "Pass threshold τ", "Redundancy", "Near-duplicate inputs", "Cost of verifying one program",
                    "Misclassified programs"):
        assert heading in html
    assert f"Report #{report.pk}" in html
    # The public samples row, printed (not only charted): precision 1/3, recall 1 first (what a
    # phone shows), then F1 TPR TNR and the counts TP 1 FP 2 TN 1 FN 0 n 4.
    by_origin = html[html.index('id="h-origin"'):]
    row = re.search(r"<th scope=\"row\">public</th>(.*?)</tr>", by_origin, re.S).group(1)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
    assert cells[:2] == ["0.333", "1.000"] and cells[5:] == ["1", "2", "1", "0", "4"]
    assert "undefined" in html  # the public suite has no direct tests: that ablation level is undefined
    assert "print3.py" in html and "false positive" in html
    assert 'src="/static/js/evaluation.js"' in html and 'id="chart-redundancy"' in html
    data = json.loads(re.search(r'<script id="evaluation-data" type="application/json">(.*?)</script>', html,
                                re.S).group(1))
    assert data["tau"]["public"]["labels"] == ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]
    assert data["redundancy"]["generated"]["labels"][0] == 100 and data["difficulty"]["public"]["labels"] == ["cf:easy"]
    assert "<script>" not in html  # CSP: no inline scripts
    # An annotator reads; only maintainers get the run button.
    assert "Run a new evaluation" not in html
    assert "Run a new evaluation" in client_for(maintainer()).get(URL).content.decode()


def test_page_shows_the_papers_tables_and_exports_each_one():
    world = build_world()
    report = run_sync(pids=[world.problem.pid])
    client = client_for(annotator())
    html = client.get(URL).content.decode()
    assert "Tables in the papers' layout" in html
    # The macro table over all candidates: public precision 1/3, recall 1, F1 1/2 in easy, average and all.
    start = html.index('id="t-paper-macro-all"')
    block = html[start:html.index("</table>", start)]
    row = re.search(r"<th scope=\"row\">public</th>(.*?)</tr>", block, re.S).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", row) == ["33.33"] * 3 + ["100.00"] * 3 + ["50.00"] * 3
    assert "1 problem where every origin has a suite; 0 excluded" in block
    assert 'id="t-tau-selection"' in html and 'id="t-near-duplicates"' in html
    link = f"/evaluation/runs/{report.pk}/tables/paper-macro-all."
    assert link + "csv" in html and link + "tex" in html
    csv_response = client.get(link + "csv")
    assert csv_response["Content-Type"].startswith("text/csv")
    lines = csv_response.content.decode().splitlines()
    assert lines[0] == ("suite origin," + ",".join(f"{m}/{c}" for m in ("Precision", "Recall", "F1")
                                                   for c in ("easy", "average", "all")))
    public = next(line for line in lines if line.startswith("public,")).split(",")
    assert [round(float(v), 4) for v in public[1:]] == [0.3333] * 3 + [1.0] * 3 + [0.5] * 3
    assert r"public & 33.33 & 33.33 & 33.33 & 100.00" in client.get(link + "tex").content.decode()
    assert client.get(f"/evaluation/runs/{report.pk}/tables/no-such.csv").status_code == 404
    assert client.get(link + "pdf").status_code == 404
    assert Client().get(link + "csv").status_code == 302  # needs a login


def test_page_without_a_report():
    html = client_for(maintainer()).get(URL).content.decode()
    assert "No evaluation has finished yet" in html


def test_page_needs_a_login_and_a_role():
    anonymous = Client().get(URL)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client_for(UserFactory(username="nobody")).get(URL).status_code == 403


def test_run_is_refused_to_annotators_and_anonymous_users():
    run = f"{URL}run/"
    assert client_for(annotator()).post(run).status_code == 403
    anonymous = Client().post(run)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    typed = client_for(maintainer()).get(run)  # POST only: the address typed goes back to the page
    assert typed.status_code == 303 and typed["Location"] == URL
    assert not EvaluationReport.objects.exists()


def test_run_needs_csrf():
    client = Client(enforce_csrf_checks=True)
    client.force_login(maintainer())
    assert client.post(f"{URL}run/").status_code == 403
    assert not EvaluationReport.objects.exists()


def test_maintainer_run_queues_one_job_on_the_default_queue(django_capture_on_commit_callbacks, rq_queues):  # noqa: F811
    import django_rq

    queue = django_rq.get_queue("default")
    queue.empty()
    client = client_for(maintainer())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{URL}run/")
    assert response.status_code == 302 and response["Location"] == URL
    report = EvaluationReport.objects.get()
    assert report.status == EvaluationReport.Status.QUEUED and report.job_id
    assert queue.job_ids == [report.job_id]
    assert queue.fetch_job(report.job_id).func_name == "review.evaluation.jobs.evaluation_report_job"
    # A second click while one is running queues nothing more; the page shows the progress.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{URL}run/")
    assert EvaluationReport.objects.count() == 1 and queue.count == 1
    html = client.get(URL).content.decode()
    assert f"Evaluation #{report.pk}" in html and 'hx-trigger="every 2s"' in html
    queue.empty()


def test_the_job_runs_the_report(rq_queues):  # noqa: F811
    from review.evaluation.jobs import evaluation_report_job
    from review.evaluation.services import evaluation_report_create, evaluation_select

    world = build_world()
    report = evaluation_report_create(selection=evaluation_select(pids=[world.problem.pid]))
    # The test has no sandbox worker: judge in-process first so the job finds current verdicts.
    run_sync(pids=[world.problem.pid])
    assert evaluation_report_job(report.pk) == EvaluationReport.Status.DONE
    done = EvaluationReport.objects.get(pk=report.pk)
    assert done.report["counts"]["pairs_judged"] == 8
    # The metrics step reported every section it computed, the last one being under way at the end.
    assert done.compute_total == 13 and done.compute_done == 12 and done.compute_step == "fast suites and kill order"


def test_status_partial_stops_polling_with_286_when_finished():
    client = client_for(annotator())
    report = EvaluationReport.objects.create(status=EvaluationReport.Status.JUDGING, judging_total=8, judging_done=3)
    url = f"{URL}runs/{report.pk}/status/"
    running = client.get(url, HTTP_HX_REQUEST="true")
    html = running.content.decode()
    assert running.status_code == 200 and "3/8 judging tasks finished" in html
    assert '<progress value="30" max="100"' in html  # judging is the first 80%: 3/8 of it
    EvaluationReport.objects.filter(pk=report.pk).update(status=EvaluationReport.Status.COMPUTING, compute_done=6,
                                                         compute_total=12, compute_step="near-duplicate inputs")
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "6/12 sections · now near-duplicate inputs" in html and '<progress value="90" max="100"' in html
    EvaluationReport.objects.filter(pk=report.pk).update(status=EvaluationReport.Status.FAILED, error="boom")
    done = client.get(url, HTTP_HX_REQUEST="true")
    assert done.status_code == 286 and "boom" in done.content.decode()
