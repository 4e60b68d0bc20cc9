"""`make run` as a newcomer runs it, checked end to end (CI runs this before the suite).

On a fresh database (a new HARDTESTS_VAR_DIR, so its own SQLite file and embedded Redis):
`make run` comes up, the first page answers, a demo login works, a verification through the
API (with the Python client, as docs/getting-started.md shows) returns reward 1 for a correct
program and 0 for a wrong one, and then Ctrl-C (SIGINT to the foreground process group, as a
terminal sends it) stops everything `make run` started: no process is left behind.

    .venv/bin/python scripts/smoke_run.py [--screenshot docs/img/home.png]

Exits non-zero with a one-line reason on the first failure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hardtests_client import HardTestsClient, VerifyRequest  # noqa: E402

START_TIMEOUT_S = 300  # bootstrap is a no-op here; migrate and load_demo on a loaded machine are not
STOP_TIMEOUT_S = 60
# demo/isqrt: T, then T values of n; print floor(sqrt(n)) for each
ISQRT_OK = "import math, sys\nfor n in sys.stdin.read().split()[1:]:\n    print(math.isqrt(int(n)))\n"
ISQRT_WRONG = "import sys\nfor n in sys.stdin.read().split()[1:]:\n    print(int(int(n) ** 0.5) + 1)\n"


class SmokeFailure(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def processes_of(session: int, marker: str) -> list[str]:
    """Every live process in the session `make run` started, or whose command line or environment
    names this run's var directory (a sandbox or a daemon may start a session of its own)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            stat = (proc / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            state, sid = fields[0], int(fields[3])
            if state == "Z":
                continue
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            try:
                environ = (proc / "environ").read_bytes().decode(errors="replace")
            except OSError:
                environ = ""
        except (OSError, ValueError):
            continue  # gone meanwhile
        if sid == session or marker in cmdline or marker in environ:
            found.append(f"{proc.name} {cmdline.strip()[:160]}")
    return found


def wait_for_page(url: str, server: subprocess.Popen[bytes], log: Path) -> float:
    started = time.monotonic()
    while time.monotonic() - started < START_TIMEOUT_S:
        if server.poll() is not None:
            raise SmokeFailure(f"make run exited with {server.returncode} before serving: {tail(log)}")
        try:
            if httpx.get(url, timeout=5).status_code in (200, 302):
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise SmokeFailure(f"no answer on {url} after {START_TIMEOUT_S} s: {tail(log)}")


def tail(log: Path) -> str:
    return " | ".join(log.read_text(errors="replace").splitlines()[-8:])


def check_first_page_and_login(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30) as web:
        first = web.get("/", follow_redirects=True)
        if first.status_code != 200 or "/accounts/login/" not in str(first.url):
            raise SmokeFailure(f"the first page of an anonymous visitor is {first.status_code} at {first.url}")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', first.text)
        if not token:
            raise SmokeFailure("the login page has no CSRF token")
        login = web.post("/accounts/login/", data={
            "username": "maintainer", "password": "maintainer-demo", "csrfmiddlewaretoken": token.group(1),
        }, headers={"Referer": f"{base}/accounts/login/"})
        if login.status_code != 302:
            raise SmokeFailure(f"the demo login answered {login.status_code}, not a redirect")
        home = web.get("/")
        if home.status_code != 200 or "maintainer" not in home.text or "Problems" not in home.text:
            raise SmokeFailure(f"the home page after login is {home.status_code} without the user's name")


def check_verification(base: str, env: dict[str, str]) -> None:
    made = subprocess.run(
        [sys.executable, "manage.py", "create_api_token", "maintainer", "--name", "smoke"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    if made.returncode != 0:
        raise SmokeFailure(f"create_api_token failed: {made.stderr.strip()[-300:]}")
    token = made.stdout.strip().splitlines()[-1]
    with HardTestsClient(base, token) as client:
        good, bad = client.verify_many([
            VerifyRequest("demo:demo/isqrt", ISQRT_OK, "python3"),
            VerifyRequest("demo:demo/isqrt", ISQRT_WRONG, "python3"),
        ])
    if good.reward != 1 or bad.reward != 0 or good.total < 1:
        raise SmokeFailure(f"verification gave reward {good.reward} / {bad.reward} over {good.total} tests")


def screenshot(base: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium",
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", "maintainer")
        page.fill("input[name=password]", "maintainer-demo")
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url(f"{base}/")
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()


def stop(server: subprocess.Popen[bytes], marker: str) -> float:
    started = time.monotonic()
    os.killpg(server.pid, signal.SIGINT)
    try:
        server.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SmokeFailure(f"make run still running {STOP_TIMEOUT_S} s after Ctrl-C") from None
    while time.monotonic() - started < STOP_TIMEOUT_S:
        left = processes_of(server.pid, marker)
        if not left:
            return time.monotonic() - started
        time.sleep(0.5)
    raise SmokeFailure(f"processes left {STOP_TIMEOUT_S} s after Ctrl-C: {left}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshot", type=Path, help="save the home page after login as this PNG")
    args = parser.parse_args()
    var = Path(tempfile.mkdtemp(prefix="hardtests-smoke-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(HARDTESTS_VAR_DIR=str(var), PORT=str(port), PYTHONUNBUFFERED="1")
    log = var / "make-run.log"
    begun = time.monotonic()
    with log.open("wb") as out:
        # its own session and process group: the group a terminal's Ctrl-C reaches
        server = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        up = wait_for_page(f"{base}/healthz", server, log)
        print(f"smoke: make run served {base} after {up:.1f} s")
        check_first_page_and_login(base)
        print("smoke: first page and the demo login work")
        check_verification(base, env)
        print("smoke: the API verified a correct (reward 1) and a wrong (reward 0) program")
        if args.screenshot:
            screenshot(base, args.screenshot)
            print(f"smoke: screenshot {args.screenshot}")
        down = stop(server, str(var))
        print(f"smoke: Ctrl-C stopped everything in {down:.1f} s; nothing left behind "
              f"(total {time.monotonic() - begun:.1f} s)")
    except SmokeFailure as exc:
        print(f"smoke: FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        for line in processes_of(server.pid, str(var)):
            os.kill(int(line.split()[0]), signal.SIGKILL)
        shutil.rmtree(var, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
