"""The janitor keeps its schedule and its connections, and its health says the truth.

- the fast pass runs every HARDTESTS_JANITOR_FAST_S between full passes (the shipped periods,
  on a fake clock: a full pass once reset the fast clock, so the fast pass never ran);
- after a PostgreSQL outage the janitor's passes succeed again (real PostgreSQL, a real
  `manage.py janitor`), and while it is down /healthz/deep says the janitor cannot reach it;
- a restarted Redis has no janitor record: not an alarm until one pass's grace has passed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from core.queues import redis_connection
from hardtests_web.ops.janitor import LAST_RUN_KEY
from tests.conftest import REPO
from tests.deploy.faults import stack_env
from tests.deploy.services import PostgresCluster, RedisServer


class _Stop(Exception):
    pass


def test_the_fast_pass_keeps_its_own_clock_with_the_shipped_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    from hardtests_web.management.commands import janitor as command

    # the shipped defaults (settings.py), as every deployment runs them
    assert (settings.HARDTESTS_JANITOR_PERIOD_S, settings.HARDTESTS_JANITOR_FAST_S) == (60.0, 10.0)
    clock = {"now": 1000.0}
    passes: list[tuple[float, str]] = []

    class FakeTime:
        @staticmethod
        def monotonic() -> float:
            return clock["now"]

        @staticmethod
        def sleep(seconds: float) -> None:
            clock["now"] += seconds
            if clock["now"] > 1000.0 + 180:
                raise _Stop

    def fake_pass(*, kind: str = "full") -> dict[str, Any]:
        passes.append((clock["now"] - 1000.0, kind))
        clock["now"] += 0.3  # a pass takes a moment
        return {"counts": {}, "errors": {}}

    monkeypatch.setattr(command, "time", FakeTime)
    monkeypatch.setattr(command, "janitor_pass", fake_pass)
    monkeypatch.setattr(command.signal, "signal", lambda *a: None)
    with pytest.raises(_Stop):
        command.Command().handle(once=False, period=None)
    fulls = [at for at, kind in passes if kind == "full"]
    assert len(fulls) == 4  # at 0, 60, 120 and 180 s
    # dead workers (a fast sweep, also part of every full pass) are looked for every 10 s
    gaps = [b - a for (a, _), (b, _) in zip(passes, passes[1:], strict=False)]
    assert max(gaps) <= 10.0 + 0.6, passes
    assert len(passes) >= 18, passes


@pytest.fixture
def fresh_redis() -> Iterator[RedisServer]:
    with RedisServer("janitor") as server:
        with override_settings(REDIS_URL=server.url, REDIS_URL_FROM_ENV=server.url):
            yield server


def _janitor_problems(**overrides: Any) -> list[str]:
    from hardtests_web.ops.health import _janitor

    with override_settings(**overrides):
        return _janitor(time.time())[1]


def test_a_restarted_redis_without_a_janitor_record_is_not_an_alarm_until_one_pass_has_passed(
        fresh_redis: RedisServer) -> None:
    # a Redis up for less than one pass (60 + 10 s): the janitor has not had its chance yet
    assert _janitor_problems() == []
    time.sleep(1.1)  # uptime_in_seconds counts whole seconds
    # past the grace (here 1 s), no record means no janitor
    problems = _janitor_problems(HARDTESTS_JANITOR_PERIOD_S=0.5, HARDTESTS_JANITOR_FAST_S=0.1)
    assert len(problems) == 1 and "no pass recorded" in problems[0], problems


def test_a_pass_that_cannot_reach_the_database_is_reported(fresh_redis: RedisServer) -> None:
    record = {"at": time.time(), "kind": "fast", "counts": {},
              "errors": {"database": "database: OperationalError: the connection is closed"}}
    redis_connection().set(LAST_RUN_KEY, json.dumps(record))
    assert _janitor_problems() == ["janitor cannot reach the database: database: OperationalError: "
                                   "the connection is closed"]
    redis_connection().set(LAST_RUN_KEY, json.dumps({**record, "at": time.time() - 200}))
    assert any("last pass 200 s ago" in p for p in _janitor_problems())


def _last(connection: Any) -> dict[str, Any] | None:
    raw = connection.get(LAST_RUN_KEY)
    return json.loads(raw) if raw else None


@pytest.mark.slow
@pytest.mark.heavy(seconds=30)
def test_the_janitor_reconnects_to_postgresql_after_an_outage(tmp_path: Path) -> None:
    import redis

    with PostgresCluster() as pg, RedisServer("janitor-pg") as redis_server:
        env = stack_env(tmp_path, DATABASE_URL=pg.url, REDIS_URL=redis_server.url,
                        HARDTESTS_JANITOR_FAST_S="0.5", HARDTESTS_JANITOR_PERIOD_S="2")
        subprocess.run([sys.executable, str(REPO / "manage.py"), "migrate", "--noinput"], env=env, cwd=REPO,
                       check=True, capture_output=True, timeout=300)
        log = tmp_path / "janitor.log"
        janitor = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "janitor"], env=env, cwd=REPO,
                                   stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        connection = redis.Redis.from_url(redis_server.url)
        try:
            def until(predicate: Any, what: str, timeout: float = 60) -> float:
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline:
                    last = _last(connection)
                    if last is not None and predicate(last):
                        return time.monotonic()
                    time.sleep(0.1)
                raise AssertionError(f"no {what} within {timeout} s: {_last(connection)}\n{log.read_text()[-3000:]}")

            until(lambda r: r["kind"] == "full" and not r["errors"], "a clean full pass")
            pg.stop()
            until(lambda r: "database" in r["errors"], "a pass that names the database")
            with override_settings(REDIS_URL=redis_server.url, REDIS_URL_FROM_ENV=redis_server.url):
                assert any(p.startswith("janitor cannot reach the database") for p in _janitor_problems())
            pg.start()
            back = time.monotonic()
            healed = until(lambda r: r["kind"] == "full" and not r["errors"] and r["at"] > time.time() - 0.5,
                           "a clean full pass after PostgreSQL returned", timeout=30)
            # within a full period and its pass, not after a restart of the janitor
            assert healed - back < 2 + 5, log.read_text()[-3000:]
            # and it stays clean: every pass after, fast and full
            time.sleep(2.5)
            last = _last(connection)
            assert last is not None and not last["errors"], last
            assert janitor.poll() is None
        finally:
            os.killpg(janitor.pid, signal.SIGTERM)
            janitor.wait(timeout=30)
