"""The first run: the banner while demo suites are being built, the demo logins and the summary block."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from generation.models import GenerationRun
from problems.demo import DEMO_USERS, demo_build_status, demo_load, demo_users_ensure, first_run_summary
from problems.models import Problem

pytestmark = pytest.mark.django_db


def _demo_runs(status: str) -> None:
    for problem in Problem.objects.filter(source="demo"):
        GenerationRun.objects.create(problem=problem, mode=GenerationRun.Mode.FROM_KIT, status=status)


def test_banner_shows_progress_while_demo_suites_build_and_goes_when_done(user_client: Client) -> None:
    demo_load()
    n = Problem.objects.filter(source="demo").count()
    assert n >= 5
    assert "demo-banner" not in user_client.get("/").content.decode()  # nothing is being built
    _demo_runs(GenerationRun.Status.QUEUED)
    cache.clear()
    html = user_client.get("/problems/").content.decode()
    assert "First run: the demo suites are being built." in html
    assert f"0 of {n} demo problems have a suite · 0 running · {n} queued" in html
    polled = user_client.get("/demo/status/", HTTP_HX_REQUEST="true")
    assert polled.status_code == 200 and f"{n} queued" in polled.content.decode()
    GenerationRun.objects.update(status=GenerationRun.Status.SUCCEEDED)
    cache.clear()
    done = user_client.get("/demo/status/", HTTP_HX_REQUEST="true")
    assert done.status_code == 286 and done.content == b""
    assert "demo-banner" not in user_client.get("/problems/").content.decode()


def test_banner_does_not_come_back_for_a_later_run_of_a_built_demo_problem(user_client: Client) -> None:
    from problems.services import suite_activate, suite_create

    demo_load()
    for problem in Problem.objects.filter(source="demo"):
        suite_activate(suite=suite_create(problem=problem, origin="generated"))
    first = Problem.objects.filter(source="demo").first()
    GenerationRun.objects.create(problem=first, mode=GenerationRun.Mode.FROM_KIT, status=GenerationRun.Status.QUEUED)
    cache.clear()
    assert demo_build_status(cached=False) is None
    assert "demo-banner" not in user_client.get("/problems/").content.decode()


def test_demo_logins_include_a_staff_account_that_opens_admin_and_queues() -> None:
    demo_users_ensure()
    client = Client()
    username, password = next((u, p) for u, p, _ in DEMO_USERS if u == "admin")
    assert client.login(username=username, password=password)
    assert client.get("/admin/").status_code == 200
    # /rq/ is django-rq's, behind staff_member_required like /admin/.
    from django.contrib.auth import get_user_model

    assert get_user_model().objects.get(username=username).is_staff
    maintainer = Client()
    assert maintainer.login(username="maintainer", password="maintainer-demo")
    assert maintainer.get("/admin/").status_code == 302  # the maintainer is not staff


def test_demo_users_cost_one_hash_a_password_a_process_and_log_in(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.contrib.auth import authenticate, get_user_model
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from problems import demo

    demo._demo_password_hash.cache_clear()
    hashed: list[str] = []
    encode = PBKDF2PasswordHasher.encode

    def counted(self: PBKDF2PasswordHasher, password: str, salt: str, iterations: int | None = None) -> str:
        hashed.append(password)
        return encode(self, password, salt, iterations)

    monkeypatch.setattr(PBKDF2PasswordHasher, "encode", counted)
    users = demo_users_ensure()
    get_user_model().objects.filter(username__in=[u for u, _, _ in users]).delete()  # a flushed database
    assert demo_users_ensure() == users
    passwords = {p for _, p, _ in DEMO_USERS}
    assert len(passwords) < len(DEMO_USERS)  # two annotators share one
    assert sorted(hashed) == sorted(passwords)  # once each, for both calls
    monkeypatch.setattr(PBKDF2PasswordHasher, "encode", encode)
    for username, password, _ in DEMO_USERS:
        assert authenticate(username=username, password=password) is not None, username
    assert authenticate(username="annotator1", password="maintainer-demo") is None


def test_first_run_summary_names_url_logins_and_what_is_built() -> None:
    demo_load()
    demo_users_ensure()
    _demo_runs(GenerationRun.Status.RUNNING)
    text = first_run_summary("http://127.0.0.1:8000/", building=demo_build_status(cached=False))
    assert "HardTests is running at http://127.0.0.1:8000/" in text
    for username, password, _ in DEMO_USERS:
        assert username in text and password in text
    assert "http://127.0.0.1:8000/admin/" in text and "/rq/" in text
    n = Problem.objects.filter(source="demo").count()
    assert f"0 of {n} problems ready, {n} running, 0 queued" in text


def test_first_run_summary_names_no_login_that_does_not_exist(settings) -> None:
    demo_load()
    text = first_run_summary("http://127.0.0.1:8000/", building=demo_build_status(cached=False))
    assert "Demo logins" not in text and all(password not in text for _, password, _ in DEMO_USERS)
    demo_users_ensure()
    settings.HARDTESTS_DEMO = False
    assert "Demo logins" not in first_run_summary("http://127.0.0.1:8000/")


def test_login_page_lists_the_demo_logins_in_demo_mode_only(settings) -> None:
    demo_users_ensure()
    page = Client().get("/accounts/login/").content.decode()
    for username, password, _ in DEMO_USERS:
        assert f'<td class="mono">{username}</td><td class="mono">{password}</td>' in page
    settings.HARDTESTS_DEMO = False
    page = Client().get("/accounts/login/").content.decode()
    assert "Demo logins" not in page and DEMO_USERS[0][1] not in page


def test_first_run_summary_says_when_candidates_are_still_being_judged() -> None:
    from problems.models import JudgingTask, Solution
    from problems.services import suite_activate, suite_create

    demo_load()
    for problem in Problem.objects.filter(source="demo"):
        suite = suite_create(problem=problem, origin="generated")
        suite_activate(suite=suite)
    solution = Solution.objects.filter(problem__source="demo").first()
    JudgingTask.objects.create(solution=solution, suite=solution.problem.suites.filter(status="active").first())
    text = first_run_summary("http://127.0.0.1:8000/", building=None)
    assert "The demo suites are built. 1 candidate judging task still to finish" in text
    assert "Nothing is running" not in text
    JudgingTask.objects.update(status=JudgingTask.Status.DONE)
    assert "Nothing is running in the background." in first_run_summary("http://127.0.0.1:8000/")
