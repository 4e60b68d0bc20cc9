"""Faults injected into a running `serve` under a bounded load (4-6 clients verifying all along).

Each test asserts what an operator needs before putting the node in front of an RL cluster: no
500, no connection closed without an answer while the server lives, no wrong verdict (a right
program is AC, a wrong one WA, or the caller is told to come back: 429/503 with Retry-After),
nothing left running, and right answers again within 30 s of the fault's end, with nobody's help.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.faults import (
    GOOD_CPP,
    GOOD_PY,
    SLOW_PY,
    WRONG_CPP,
    WRONG_PY,
    Load,
    Stack,
    assert_truthful,
    fill,
    seed,
    small_disk,
    stack_dir,
    stack_env,
    summary,
)
from tests.deploy.services import PostgresCluster, RedisServer

pytestmark = [pytest.mark.slow]


@pytest.fixture
def root() -> Iterator[Path]:
    with stack_dir("hardtests-fault-") as path:
        yield path


@pytest.mark.heavy(seconds=25)
def test_killed_workers_and_a_killed_redis_are_restarted_and_service_comes_back(root: Path) -> None:
    env = stack_env(root)  # SQLite and the embedded Redis, as `make run`
    stack = Stack(root, env)
    stack.token = seed(env)
    stack.start()
    load = Load(stack, clients=4).start()
    try:
        time.sleep(2)
        before = stack.pids()
        workers = ("sandbox-worker-0", "sandbox-worker-1")
        killed_at = time.monotonic()
        for name in workers:
            os.kill(before[name], signal.SIGKILL)
        stack.wait_for(lambda: all(stack.pids()[n] != before[n] for n in workers), "the workers started again",
                       timeout=30)
        back = load.right_answer_after(killed_at)
        worker_phase = load.since(killed_at)
        text = stack.text()
        for name in workers:
            assert f"{name} (pid {before[name]}) exited with signal SIGKILL" in text, text[-3000:]
        # the dead workers were taken off RQ's lists at once: nobody waited out the sync timeout
        assert not [a for a in worker_phase if a.body.get("code") == "timeout"], summary(worker_phase)

        redis_pid = int((root / "var" / "redis" / "redis.pid").read_text())
        os.kill(redis_pid, signal.SIGKILL)
        redis_killed_at = time.monotonic()
        stack.wait_for(lambda: "the embedded Redis is back" in stack.text(), "the Redis restart", timeout=30)
        redis_back = load.right_answer_after(redis_killed_at)
        redis_phase = load.since(redis_killed_at)
    finally:
        answers = load.stop()
        code = stack.stop()
    assert_truthful(answers)
    assert code == 0, stack.text()[-3000:]
    assert stack.left_running() == []
    print(f"\nworkers killed: right answers again after {back:.1f} s; Redis killed: after {redis_back:.1f} s; "
          f"answers {summary(answers)}; during the Redis outage {summary(redis_phase)}")


@pytest.mark.heavy(seconds=22)
def test_sigkill_of_serve_leaves_nothing_and_sigterm_drains(root: Path) -> None:
    env = stack_env(root)
    stack = Stack(root, env)
    stack.token = seed(env)
    stack.start()
    children = stack.pids()
    load = Load(stack, clients=4).start()
    time.sleep(2)
    assert stack.proc is not None
    os.kill(stack.proc.pid, signal.SIGKILL)
    stack.proc.wait(timeout=10)
    left = stack.left_running(timeout=15)
    answers = load.stop()
    assert left == [], f"{len(left)} of {len(children) + 1} children left running after SIGKILL of serve"
    # the server itself was killed: a request it held may be dropped, none may be answered wrong
    assert_truthful(answers, refused_ok=True, dropped_ok=True)

    stack.start()  # the same port, free again
    # slow programs (about a second of CPU each): requests are in flight when SIGTERM comes
    drain = Load(stack, clients=6, programs=((SLOW_PY, "AC"), (WRONG_PY, "WA"))).start()
    time.sleep(3)
    term_at = time.monotonic()
    code = stack.stop(signal.SIGTERM)
    stopped_in = time.monotonic() - term_at
    answers = drain.stop()
    in_flight = [a for a in answers if a.at < term_at]
    assert in_flight
    # every request the server held got an answer: its verdict, or 503 shutting_down
    assert all(a.status is not None for a in in_flight), summary(in_flight)
    assert_truthful(in_flight)
    # After the signal the listening socket is closed: a new connection is refused (the client
    # knows the server never saw it); one the server took, from its accept queue too, is answered
    # (503 shutting_down), never closed or reset without an answer.
    assert_truthful([a for a in answers if a.at >= term_at], refused_ok=True)
    assert code == 0, stack.text()[-3000:]
    assert stack.left_running() == []
    print(f"\nSIGTERM: stopped in {stopped_in:.1f} s; {len(in_flight)} requests started before it: {summary(in_flight)}; "
          f"after it: {summary([a for a in answers if a.at >= term_at])}")


@pytest.mark.heavy(seconds=55)
def test_postgres_stopped_15_s_and_redis_restarted(root: Path) -> None:
    with PostgresCluster() as pg, RedisServer("fault-redis-secret") as redis_server:
        # the LLM stage too: it must wait out the database outage, not exit
        env = stack_env(root, DATABASE_URL=pg.url, REDIS_URL=redis_server.url, HARDTESTS_LLM_WORKERS="1")
        stack = Stack(root, env)
        stack.token = seed(env)
        stack.start()
        # verification first: with both bulk jobs running (one worker takes only `api`), a
        # verification is judged, not left waiting behind them (it would end in 503 timeout)
        import redis
        from rq import Queue

        bulk = Queue("sandbox", connection=redis.Redis.from_url(redis_server.url))
        jobs = [bulk.enqueue("time.sleep", 30, job_timeout=120) for _ in range(2)]
        _until_started = time.monotonic() + 60
        while not any(j.get_status(refresh=True) == "started" for j in jobs) and time.monotonic() < _until_started:
            time.sleep(0.2)
        assert any(j.get_status(refresh=True) == "started" for j in jobs)
        status, answer = stack.verify(GOOD_PY)
        assert (status, answer.get("verdict")) == (200, "AC"), answer
        assert [j.get_status(refresh=True) for j in jobs].count("queued") == 1  # the other waits: no worker takes it
        load = Load(stack, clients=4).start()
        try:
            time.sleep(2)
            pg.stop()
            down_at = time.monotonic()
            time.sleep(15)
            pg.start()
            up_at = time.monotonic()
            pg_back = load.right_answer_after(up_at)
            outage = [a for a in load.since(down_at) if a.at < up_at]

            redis_server.kill()
            time.sleep(3)
            redis_server.start()
            redis_up_at = time.monotonic()
            redis_back = load.right_answer_after(redis_up_at)
        finally:
            answers = load.stop()
            code = stack.stop()
        assert_truthful(answers)
        codes = {a.body.get("code") for a in outage if a.status == 503}
        assert "database_unavailable" in codes, summary(outage)
        assert not re.search(r"serve: llm-worker-0 \(pid \d+\) exited", stack.text()), stack.text()[-3000:]
        assert code == 0, stack.text()[-3000:]
        assert stack.left_running() == []
    print(f"\nPostgreSQL 15 s down: {summary(outage)}; right answers {pg_back:.1f} s after it was back; "
          f"Redis restarted: {redis_back:.1f} s")


@pytest.fixture
def disk(root: Path) -> Iterator[Path]:
    with small_disk(root / "disk") as path:
        yield path


@pytest.mark.heavy(seconds=13)
def test_a_full_disk_is_a_503_never_a_verdict_and_heals_once_freed(root: Path, disk: Path) -> None:
    # Everything of the node that lives on a disk, on one small disk: the var dir (SQLite, the
    # embedded Redis's directory, stored bodies), the compile cache, the directory compiles write
    # in and sandboxes bind from, and the temporary directory. (Batches' inputs and program views
    # are on /dev/shm, memory, not this disk.)
    var = disk / "var"
    (disk / "tmp").mkdir(mode=0o1777)
    (disk / "tmp").chmod(0o1777)
    env = stack_env(root, HARDTESTS_VAR_DIR=str(var), HARDTESTS_MEDIA_ROOT=str(var / "media"),
                    HARDTESTS_SANDBOX_CACHE=str(var / "sandbox-cache"), HARDTESTS_SANDBOX_WORK_DIR=str(disk / "work"),
                    TMPDIR=str(disk / "tmp"), DATABASE_URL=f"sqlite:///{var / 'db.sqlite3'}")
    stack = Stack(root, env)
    stack.token = seed(env)
    stack.start()
    assert any((disk / "work").glob("hardtests-sandbox-*")), "the sandbox does not work on the test's disk"
    # every request sends a program never seen before; a C++ one's compile writes its binary on
    # the disk (a new Python program needs none: the zygote checks and runs it from memory)
    load = Load(stack, clients=2).start()
    cpp = Load(stack, clients=1, programs=((GOOD_CPP, "AC"), (WRONG_CPP, "WA")), language="cpp").start()
    try:
        time.sleep(1)
        filler = disk / "filler"
        fill(filler)
        full_at = time.monotonic()
        # full until three C++ verifications that started after it have their answers
        deadline = full_at + 90
        while len(cpp.since(full_at)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        filler.unlink()
        freed_at = time.monotonic()
        back = load.right_answer_after(freed_at)
        during = [a for a in load.since(full_at) + cpp.since(full_at) if a.at < freed_at]
    finally:
        answers = load.stop() + cpp.stop()
    try:
        assert_truthful(answers)
        # the machine's failure is said as one, with its reason, never as a verdict
        refused = [a for a in during if a.status == 503]
        assert any(a.body.get("code") == "judging_error" and "No space left" in a.body.get("detail", "")
                   for a in refused), f"the full disk was never hit: {summary(during)}"
        # nothing of the fault stays behind (a compile error cached from the full disk would be
        # reward 0 for a right program from now on): each program refused then is judged right now
        for a in refused[:4]:
            status, answer = stack.verify(a.code, language=a.language)
            assert (status, answer.get("verdict")) == (200, a.expected), (a.body, answer)
    finally:
        code = stack.stop()
    assert code == 0, stack.text()[-3000:]
    assert stack.left_running() == []
    print(f"\ndisk full {freed_at - full_at:.1f} s: {summary(during)}; right answers {back:.1f} s after it was freed")
