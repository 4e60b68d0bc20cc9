"""A token given in the URL (``/t/<token>/``) appears in no log: gunicorn's access and error
logs of the real production web process, and Django's loggers."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from hardtests_web.log_redact import PathTokenFilter
from tests.conftest import REPO, process_group_stop, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SECRET = "htk_SECRETVALUE123"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gunicorn_logs_never_show_a_url_token(tmp_path: Path):
    port = _port()
    access, errors = tmp_path / "access.log", tmp_path / "error.log"
    env = {**worker_env(), "HARDTESTS_API_URL_TOKENS": "1", "HARDTESTS_WEB_WORKERS": "1",
           "HARDTESTS_WEB_BIND": f"127.0.0.1:{port}"}
    child = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:hardtests_web.gunicorn_conf",
                              "--access-logfile", str(access), "--error-logfile", str(errors),
                              "--log-level", "debug", "hardtests_web.wsgi"],
                             cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start: {errors.read_text()[-2000:]}") from None
                time.sleep(0.2)
        for path in (f"/sandboxfusion/t/{SECRET}/run_code", f"/api/v1/openrlhf/t/{SECRET}/reward"):
            response = requests.post(f"http://127.0.0.1:{port}{path}", json={"code": "print(1)"}, timeout=120,
                                     headers={"Referer": f"http://x{path}"})
            assert response.status_code in (400, 401, 404, 422)
    finally:
        process_group_stop(child)
    logged = access.read_text() + errors.read_text()
    assert "/t/<redacted>/run_code" in logged and "/t/<redacted>/reward" in logged, logged[-2000:]
    assert SECRET not in logged


def test_tracebacks_are_redacted_too(caplog):
    logger = logging.getLogger("tests.redaction")
    logger.addFilter(PathTokenFilter())
    try:
        raise ValueError(f"cannot reach http://host/sandboxfusion/t/{SECRET}/run_code")
    except ValueError:
        with caplog.at_level(logging.ERROR, logger="tests.redaction"):
            logger.exception("request %s failed", f"/api/v1/openrlhf/t/{SECRET}/reward")
    assert SECRET not in caplog.text and "/t/<redacted>/run_code" in caplog.text


def test_a_real_token_is_in_no_log_whatever_the_url(tmp_path: Path, token: str):
    """A real token, in URLs clients get wrong as well as right (no trailing segment, another
    case, a query string, a header), through gunicorn: neither its access and error logs nor
    the app's own log (its stderr) nor any answer's body holds it."""
    port = _port()
    access, errors, app = tmp_path / "access.log", tmp_path / "error.log", tmp_path / "app.log"
    env = {**worker_env(), "HARDTESTS_API_URL_TOKENS": "1", "HARDTESTS_WEB_WORKERS": "1",
           "HARDTESTS_WEB_BIND": f"127.0.0.1:{port}", "LOG_LEVEL": "DEBUG"}
    child = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:hardtests_web.gunicorn_conf",
                              "--access-logfile", str(access), "--error-logfile", str(errors),
                              "--access-logformat", '%(h)s "%(r)s" %(s)s %(q)s "%(f)s" "%({authorization}i)s"',
                              "--log-level", "debug", "hardtests_web.wsgi"],
                             cwd=REPO, env=env, start_new_session=True, stdout=app.open("wb"),
                             stderr=subprocess.STDOUT)
    bodies = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start: {errors.read_text()[-2000:]}") from None
                time.sleep(0.2)
        base = f"http://127.0.0.1:{port}"
        for method, path, body in [
            ("POST", f"/api/v1/openrlhf/t/{token}", {}),                       # no /reward
            ("POST", f"/api/v1/openrlhf/t/{token}/reward", {"query": ["x"]}),  # 400/422: no labels
            ("POST", f"/sandboxfusion/T/{token}/run_code", {}),                # another case
            ("POST", f"/sandboxfusion/t/{token}/run_code?token={token}", {"code": 1}),
            ("GET", f"/sandboxfusion/t/{token}/run_code", None),               # 405
            ("POST", f"/sandboxfusion/t/{token}/submit", {"dataset": "x", "id": "no/such", "completion": "c"}),
            ("GET", f"/api/v1/problems/?token={token}", None),
        ]:
            response = requests.request(method, base + path, json=body, timeout=120, allow_redirects=False,
                                        headers={"Referer": base + path, "Authorization": f"Bearer {token}x"})
            assert 300 <= response.status_code < 500, (path, response.status_code)
            bodies.append(response.text + str(response.headers))
    finally:
        process_group_stop(child)
    logged = {name: f.read_text() for name, f in (("access", access), ("error", errors), ("app", app))}
    assert logged["access"].count("\n") >= 7 and "<redacted>" in logged["access"], logged["access"][-2000:]
    for name, text in logged.items():
        assert token not in text and token[:20] not in text, (name, text[-3000:])
    for body in bodies:
        assert token[:20] not in body, body[:500]
