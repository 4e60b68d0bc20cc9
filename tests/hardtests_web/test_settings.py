from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("SECRET_KEY", "DEBUG", "REDIS_URL", "DATABASE_URL", "HARDTESTS_DEMO", "SECURE_COOKIES")}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
        env={**clean, "DJANGO_SETTINGS_MODULE": "hardtests_web.settings", **env},
    )


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    result = _run("import django; django.setup()", HARDTESTS_DEMO="0", HARDTESTS_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG=0 and HARDTESTS_DEMO=0" in result.stderr


def test_development_generates_the_secret_key_once(tmp_path):
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    first = _run(code, HARDTESTS_VAR_DIR=str(tmp_path))
    second = _run(code, HARDTESTS_VAR_DIR=str(tmp_path))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and len(first.stdout.strip()) > 40
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_defaults_need_no_environment(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.REDIS_URL.startswith('unix://'), s.DEBUG, "
        "s.HARDTESTS_DEMO, s.SESSION_COOKIE_SECURE)"
    )
    result = _run(code, HARDTESTS_VAR_DIR=str(tmp_path))
    # What `make run` gets: no debug pages (they list every URL pattern), the demo over plain HTTP.
    assert result.stdout.split() == ["django.db.backends.sqlite3", "True", "False", "True", "False"]
    assert _run(code, HARDTESTS_VAR_DIR=str(tmp_path), DEBUG="1").stdout.split()[2] == "True"


def test_a_malformed_variable_fails_loudly(tmp_path):
    result = _run("import django; django.setup()", HARDTESTS_VAR_DIR=str(tmp_path), HARDTESTS_SANDBOX_WORKERS="two")
    assert "HARDTESTS_SANDBOX_WORKERS must be an integer" in result.stderr


def test_embedded_redis_starts_on_demand_is_shared_and_stops(tmp_path):
    """The process that starts the embedded Redis stops it as it exits; a process that finds it
    running uses it and leaves it be (tests/hardtests_web/test_embedded_lifetime.py: commands)."""
    import time

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, django; django.setup()\n"
         "from core.embedded import ensure_redis\n"
         "import redis; from django.conf import settings\n"
         "assert ensure_redis() is not None and ensure_redis() is None\n"
         "redis.Redis.from_url(settings.REDIS_URL).set('k', 'v'); print('READY', flush=True); sys.stdin.read()\n"],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")},
             "DJANGO_SETTINGS_MODULE": "hardtests_web.settings", "HARDTESTS_VAR_DIR": str(tmp_path)})
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "READY"
    read = ("import django; django.setup(); import redis; from django.conf import settings; "
            "from core.embedded import ensure_redis; assert ensure_redis() is None; "
            "print(redis.Redis.from_url(settings.REDIS_URL).get('k').decode())")
    # A second process sees the same server and data, and leaves it running as it exits.
    assert _run(read, HARDTESTS_VAR_DIR=str(tmp_path)).stdout.strip() == "v"
    assert _run(read, HARDTESTS_VAR_DIR=str(tmp_path)).stdout.strip() == "v"
    holder.stdin.close()
    assert holder.wait(timeout=30) == 0
    deadline = time.monotonic() + 5
    while (tmp_path / "redis" / "redis.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (tmp_path / "redis" / "redis.sock").exists()
    stopped = _run("import django; django.setup(); from core.embedded import stop_redis; print(stop_redis())",
                   HARDTESTS_VAR_DIR=str(tmp_path))
    assert stopped.stdout.strip() == "False"


@pytest.mark.django_db
def test_pages_need_a_login_and_send_a_strict_csp(client):
    response = client.get("/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    login = client.get("/accounts/login/")
    assert "script-src 'self'" in login["Content-Security-Policy"]
    assert "unsafe-inline" not in login["Content-Security-Policy"].split("script-src")[1].split(";")[0]


@pytest.mark.django_db
def test_public_read_opens_pages_but_not_writes(client, settings):
    settings.HARDTESTS_PUBLIC_READ = True
    assert client.get("/").status_code == 200
    assert client.post("/").status_code == 302


@pytest.mark.django_db
@pytest.mark.parametrize(("demo", "expected_users"), [(True, 1), (False, 0)])
def test_hardtests_demo_off_loads_problems_but_creates_no_logins(settings, demo, expected_users):
    import json
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from problems.models import Problem

    settings.HARDTESTS_DEMO = demo
    out = StringIO()
    call_command("load_demo", stdout=out)
    summary = json.loads(out.getvalue())
    assert Problem.objects.filter(source="demo").count() == summary["created"] > 0
    assert ("users" in summary) == bool(expected_users)
    assert get_user_model().objects.exists() == bool(expected_users)
