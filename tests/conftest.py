"""Test-wide set-up: a real, private Redis server and a private media root per session.

Only the LLM is ever faked. Redis is a real redis-server started here on a unix socket in
a temporary directory, so tests never touch the development server under var/.

With HARDTESTS_TEST_TIER=fast (`make test-fast`, scripts/test-fast) only the tests
tests/tiers.py marks `fast` run, no Redis is started, and any use of Redis, the sandbox or a
subprocess against the test services raises FastTierViolation: a test tiered wrongly fails
loudly instead of passing by luck or hanging.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import override_settings

from core.embedded import start_redis_server
from tests.tiers import mark_fast, not_fast_path

REPO = Path(__file__).resolve().parent.parent


def _long_lived(args: list[Any] | tuple[Any, ...]) -> bool:
    """The servers, workers and helpers tests start: `manage.py ...` (RQ workers, serve, the
    janitor), gunicorn, pytest and xdist's workers, redis-server, moto's server, `sleep`. Not
    the sandbox's own processes (bubblewrap dies with its parent already) nor short commands,
    where an exec more skews tests that time a loaded machine."""
    words = [os.fspath(a) for a in args[:4] if isinstance(a, str | os.PathLike)]
    if not words:
        return False
    return (any(w.endswith("manage.py") or w in ("gunicorn", "pytest") or "sys.stdin.readline()" in w  # xdist's
                for w in words)
            or os.path.basename(words[0]) in ("redis-server", "moto_server", "sleep", "gunicorn"))


def _children_die_with_the_tests() -> None:
    """Every process a test (or xdist) starts from the main thread dies with the process that
    started it (PR_SET_PDEATHSIG, set by util-linux's `setpriv` before it execs the command: no
    Python runs in the child between fork and exec, which could deadlock on a lock another
    thread held), so a killed `make test` (a CI timeout) leaves no RQ worker, server or helper
    behind to take the next run's jobs (tests/deploy/test_killed_runner.py). Not from other
    threads: the signal comes when the thread that started the child ends."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return
    start = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if (threading.current_thread() is threading.main_thread() and isinstance(args, list | tuple) and args
                and not rest and not kwargs.get("shell") and kwargs.get("executable") is None
                and _long_lived(args)
                and shutil.which(os.fspath(args[0]), path=(kwargs.get("env") or os.environ).get("PATH"))):
            # (a command that is not found still raises here, as without setpriv)
            args = [setpriv, "--pdeathsig", "KILL", "--", *args]
        start(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


_children_die_with_the_tests()
FAST_TIER = os.environ.get("HARDTESTS_TEST_TIER") == "fast"

# The serial pass (scripts/test.sh) runs its bubblewrap tests in one process a CPU, each process
# kept to its own CPU with HARDTESTS_TEST_PIN=1: the sandboxes it starts inherit the affinity
# (the sandbox sets none and its cgroups have no cpuset), so the programs of one process never
# wait for the other's and what each test measures (CPU time, run delay) is its own.
if os.environ.get("HARDTESTS_TEST_PIN") == "1" and os.environ.get("PYTEST_XDIST_WORKER", "").startswith("gw"):
    _cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {_cpus[int(os.environ["PYTEST_XDIST_WORKER"][2:]) % len(_cpus)]})
# Where Redis would be in the fast tier: nothing listens, and connecting raises before that.
NO_REDIS_URL = "unix:///nonexistent/the-fast-tier-starts-no-redis.sock?db=0"


class FastTierViolation(BaseException):
    """A fast-tier test reached Redis, the sandbox or the test services from a subprocess.
    A BaseException, so that product code's `except Exception` (which turns a sandbox failure
    into an SE, a Redis error into a 503) cannot hide it."""


_violations: list[str] = []


def _refuse(what: str) -> Any:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        _violations.append(what)
        raise FastTierViolation(
            f"{what} in the fast tier (HARDTESTS_TEST_TIER=fast): list this test's file or fixture in "
            "tests/tiers.py so it runs only in the full suite")
    return refuse


def _fast_tier_guards(patch: pytest.MonkeyPatch) -> None:
    import redis.asyncio.connection
    import redis.connection

    import sandbox
    from sandbox.bwrap import BwrapSandbox
    from sandbox.docker_backend import DockerSandbox

    patch.setattr(redis.connection.AbstractConnection, "connect_check_health", _refuse("Redis"))
    patch.setattr(redis.asyncio.connection.AbstractConnection, "connect_check_health", _refuse("Redis"))
    patch.setattr(BwrapSandbox, "__init__", _refuse("the sandbox"))
    patch.setattr(DockerSandbox, "__init__", _refuse("the sandbox"))
    sandbox._instances.clear()


def _postgres_from_template(worker: str) -> None:
    """This test process's PostgreSQL database, copied from a template the first process migrates
    (CREATE DATABASE ... TEMPLATE, under a lock every process of the pass shares): one migration
    of the schema a pass instead of one a process."""
    import fcntl
    import tempfile

    creation = connection.creation
    template = f"test_{connection.settings_dict['NAME']}_template"
    lock = Path(tempfile.gettempdir()) / f"hardtests-pg-{connection.settings_dict['PORT']}-template.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with creation._nodb_cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
            made = cursor.fetchone() is not None
        if made:
            connection.settings_dict["NAME"] = template
        else:
            connection.settings_dict["TEST"]["NAME"] = template
            creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        connection.close()  # a template with a connection open cannot be copied
        creation.clone_test_db(suffix=worker, verbosity=0, autoclobber=True)
    # the connection's settings are settings.DATABASES' own dict: worker_env() hands the copy on
    connection.settings_dict.update(creation.get_test_db_clone_settings(worker))
    connection.close()


if os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("PYTEST_XDIST_WORKER"):
    @pytest.fixture(scope="session")
    def django_db_setup(django_test_environment: None, django_db_blocker: Any,
                        django_db_modify_db_settings: None) -> Iterator[None]:
        """The PostgreSQL pass (scripts/test.sh): each process's database is a copy of one
        migrated once (`_postgres_from_template`); the server and its databases are thrown away
        after the pass (scripts/with_postgres.py)."""
        with django_db_blocker.unblock():
            _postgres_from_template(os.environ["PYTEST_XDIST_WORKER"])
        yield


def _sqlite_files(name: Path) -> tuple[Path, ...]:
    """A SQLite database's file and the two WAL-mode files beside it."""
    return name, name.with_name(name.name + "-wal"), name.with_name(name.name + "-shm")


def _sqlite_from_template(run_dir: Path) -> Path:
    """This test process's SQLite database, copied from a template the first process of the pass
    migrates (under a lock in the pass's own temporary folder, which every xdist process shares):
    one migration a pass instead of one a process (3.2 s of CPU each). Returns the copy."""
    import fcntl
    import sqlite3

    name = Path(connection.settings_dict["TEST"]["NAME"])
    template = run_dir / "hardtests-template.sqlite3"
    with (run_dir / "hardtests-template.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if not template.exists():
            connection.settings_dict["TEST"]["NAME"] = str(template)
            connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
            connection.close()
            connection.settings_dict["TEST"]["NAME"] = str(name)
        for stale in _sqlite_files(name):
            stale.unlink(missing_ok=True)
        with sqlite3.connect(template) as source, sqlite3.connect(name) as copy:
            source.backup(copy)
    # the connection's settings are settings.DATABASES' own dict: worker_env() hands the copy on
    connection.settings_dict["NAME"] = str(name)
    connection.close()
    return name


if (not FAST_TIER and os.environ.get("PYTEST_XDIST_WORKER")
        and settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"):
    @pytest.fixture(scope="session")
    def django_db_setup(django_test_environment: None, django_db_blocker: Any, django_db_modify_db_settings: None,
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
        """The SQLite passes (scripts/test.sh): each xdist process's database is a copy of one
        migrated once a pass (`_sqlite_from_template`), removed when the process ends."""
        with django_db_blocker.unblock():
            name = _sqlite_from_template(tmp_path_factory.getbasetemp().parent)
        yield
        with django_db_blocker.unblock():
            connection.close()
        for path in _sqlite_files(name):
            path.unlink(missing_ok=True)


@pytest.fixture(scope="session", autouse=True)
def _private_services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    guards = pytest.MonkeyPatch()
    if FAST_TIER:
        _fast_tier_guards(guards)
        child, url = None, NO_REDIS_URL
    else:
        redis_dir = tmp_path_factory.mktemp("redis")
        child = start_redis_server(redis_dir, daemonize=False)
        url = f"unix://{redis_dir / 'redis.sock'}?db=0"
    media = tmp_path_factory.mktemp("media")
    queues = {name: {**conf, "URL": url} for name, conf in settings.RQ_QUEUES.items()}
    override = override_settings(REDIS_URL=url, REDIS_URL_FROM_ENV=url, RQ_QUEUES=queues, MEDIA_ROOT=str(media))
    override.enable()
    # django_rq copied RQ_QUEUES at import (its /rq/ dashboard and get_queue read that copy).
    import django_rq.settings

    saved_queues = dict(django_rq.settings.QUEUES)
    django_rq.settings.QUEUES.update(queues)
    # ...and its dashboard reads each queue's connection from a list made at import, too.
    saved_list = [dict(entry) for entry in django_rq.settings.QUEUES_LIST]
    for entry in django_rq.settings.QUEUES_LIST:
        if entry["name"] in queues:
            entry["connection_config"] = queues[entry["name"]]
    os.environ["REDIS_URL"] = url
    os.environ["HARDTESTS_MEDIA_ROOT"] = str(media)
    try:
        yield
    finally:
        django_rq.settings.QUEUES.update(saved_queues)
        for entry, saved in zip(django_rq.settings.QUEUES_LIST, saved_list, strict=True):
            entry.update(saved)
        override.disable()
        guards.undo()
        if child is not None:
            child.terminate()
            child.wait(timeout=10)


def pytest_configure(config: pytest.Config) -> None:
    """pytest's unraisable-exception plugin runs a full garbage collection five times as a test
    process ends (a constant for exotic cycles, from the Trio project): about 1 s of CPU in
    each process on this suite's heap. One collection still runs every finaliser due and
    reports what it raised."""
    from _pytest.unraisableexception import gc_collect_iterations_key

    config.stash[gc_collect_iterations_key] = 1


def pytest_runtest_setup(item: pytest.Item) -> None:
    _violations.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A violation swallowed on the way (in a thread, by a broad except) still fails its test."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if FAST_TIER and call.when == "call" and report.passed and _violations:
        report.outcome = "failed"
        report.longrepr = (f"FastTierViolation: the test reached {', '.join(sorted(set(_violations)))} "
                           "(caught and hidden on the way): list its file or fixture in tests/tiers.py")


@pytest.fixture(scope="module", autouse=True)
def _queues_start_empty(_private_services: None) -> None:
    """Every test file starts on empty RQ queues. A job an earlier file enqueued and nobody ran
    (a campaign's materialisation jobs, a run's judging: up to 311 seen in one process) would
    otherwise be the first work of this file's own worker: its counts jumped, and once it stayed
    busy for 30 s (CI, the verdict cache's test)."""
    if FAST_TIER:
        return
    from core.queues import get_queue

    for name in settings.RQ_QUEUES:
        get_queue(name).empty()


def worker_env() -> dict[str, str]:
    """Environment for a subprocess (an RQ worker, a management command) that must use
    the test database, the test Redis and the test media root."""
    if FAST_TIER:
        _refuse("a subprocess against the test services")()
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return dict(os.environ, DATABASE_URL=url, REDIS_URL=settings.REDIS_URL,
                HARDTESTS_MEDIA_ROOT=str(settings.MEDIA_ROOT), PYTHONUNBUFFERED="1")


def checked_worker_argv(*queues: str, name: str | None = None) -> list[str]:
    """`manage.py rqworker` for `queues` as `serve` starts a sandbox worker: a CheckedWorker,
    without Django's system checks (0.9 s of CPU a start; `serve` runs them once itself)."""
    return [sys.executable, str(REPO / "manage.py"), "rqworker", "--skip-checks",
            *(["--name", name] if name else []), "--worker-class", "hardtests_web.ops.worker.CheckedWorker", *queues]


def process_group_stop(proc: subprocess.Popen[Any], *, graceful: bool = True) -> None:
    """Stop a subprocess started with start_new_session=True together with its children (an RQ
    worker and its work horse): SIGTERM and up to 15 s for a warm shutdown, else SIGKILL;
    graceful=False kills at once."""
    if proc.poll() is not None:
        return
    if graceful:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            pass
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def forget_gone_workers(connection: Any) -> int:
    """Unregister, with their health, the RQ workers in this Redis whose process no longer exists
    (an earlier test of this process killed them): a test counting the reaper's sweeps counts its
    own workers. How many."""
    from rq.worker import Worker

    from core.queues import WORKER_HEALTH_HASH

    gone = []
    for worker in Worker.all(connection=connection):
        try:
            os.kill(worker.pid, 0)
        except ProcessLookupError:
            gone.append(worker)
        except (PermissionError, TypeError):
            continue
    for worker in gone:
        worker.register_death()
        connection.hdel(WORKER_HEALTH_HASH, worker.name)
    return len(gone)


def manage(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `python manage.py ...` in a subprocess against the test database."""
    return subprocess.run([sys.executable, str(REPO / "manage.py"), *args], env=worker_env(), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=check)


# Fewer calls than the paper's defaults keep the demo tests quick; the kits still have to
# catch every wrong candidate with them.
DEMO_COUNTS = {"HARDTESTS_REGULAR_CALLS": 5, "HARDTESTS_STRATIFIED_CALLS": 3, "HARDTESTS_HACKING_CALLS": 3}


@pytest.fixture(scope="module")
def demo_runs(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, Any]]:
    """Load the demo problems and materialise every kit once per module (real sandbox, no LLM; the
    tests that use it are together in tests/demo/test_demo.py, so it is built once a run),
    inside a transaction rolled back at the end; maps pid -> its GenerationRun."""
    from django.db import transaction

    from generation.models import GenerationRun
    from generation.pipeline import generation_run_execute
    from generation.services import generation_run_start
    from problems.demo import demo_folders, demo_load
    from problems.models import Problem

    if not demo_folders():
        pytest.skip("no demo problems in problems/demo_data")
    with django_db_blocker.unblock(), override_settings(**DEMO_COUNTS):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            demo_load()
            runs = {}
            for problem in Problem.objects.filter(source="demo").order_by("pid"):
                run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
                runs[problem.pid] = generation_run_execute(run_id=run.pk)
            yield runs
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> list[Any] | None:
    """A class a test module imports from the project (TestSuite, TestCase, TestOutcome) is no test
    class: not collected. pytest would otherwise find its source to warn that it cannot collect it
    (a warning pyproject.toml ignores), 77 of them, 1.1 s of CPU in every test process."""
    if isinstance(obj, type) and not obj.__module__.startswith("tests."):
        return []
    return None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast tier does not import the files it would leave out whole (their imports and
    fixtures cost seconds of collection in every process)."""
    return True if FAST_TIER and not_fast_path(collection_path) else None


# The sandbox's tests that judge by verdict and output alone (what a hostile program can reach,
# what a program's text does to the compiler, the zygote and spares giving the verdicts and
# outputs of fresh sandboxes, the compile cache): their answers do not depend on what runs beside
# them (CPU time is the program's own, limits are per batch), so they run in the parallel pass.
# Every other test of tests/sandbox measures time, priority, memory or starvation, and any test
# anywhere that starts a Docker engine of its own (`docker_sb`) runs alone in the serial pass.
SANDBOX_BESIDE_OTHERS = (
    "test_hostile.py", "test_kernel_surface.py", "test_program_text_traps.py", "test_zygote_compile_answer.py",
    "test_cache.py", "test_inputs_cache.py", "test_c_language.py", "test_zygote.py",
    "test_spares.py::test_spares_give_the_verdicts_and_outputs_of_fresh_sandboxes",
)


def serial_item(item: pytest.Item) -> bool:
    """Whether a test runs in the serial pass: a tests/sandbox test that measures time, priority,
    memory or starvation, or one that uses a Docker engine of its own."""
    if item.get_closest_marker("alone"):
        return False
    callspec = getattr(item, "callspec", None)
    if "docker_sb" in getattr(item, "fixturenames", ()) or (callspec is not None and "docker" in callspec.id):
        return True
    path = Path(str(item.path))
    if REPO / "tests" / "sandbox" not in path.parents:
        return False
    where = f"{path.name}::{getattr(item, 'originalname', item.name)}"
    return not any(where == entry or path.name == entry for entry in SANDBOX_BESIDE_OTHERS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that measure what a program can do to its verdict by time, memory or priority run
    alone, in the `serial` pass of scripts/test.sh, not beside another test process
    (`serial_item`). Then every test tests/tiers.py finds fast is marked `fast`; the fast tier
    runs only those."""
    for item in items:
        if serial_item(item):
            item.add_marker(pytest.mark.serial)
    mark_fast(items)
    if FAST_TIER:
        slow = [item for item in items if not item.get_closest_marker("fast")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if item.get_closest_marker("fast")]
    _longest_files_first(items)


def _longest_files_first(items: list[pytest.Item]) -> None:
    """Order the files for the parallel pass (scripts/test.sh runs xdist with --dist loadfile
    and --no-loadscope-reorder): the files of `heavy` tests first, the longest first, then the
    others by their number of tests (xdist's own default). A file of one three-minute test
    handed out last kept one process busy long after the other had finished."""
    weight: dict[Path, float] = {}
    count: dict[Path, int] = {}
    for item in items:
        path = Path(str(item.path))
        marker = item.get_closest_marker("heavy")
        weight[path] = weight.get(path, 0.0) + (float(marker.kwargs.get("seconds", 30)) if marker else 0.0)
        count[path] = count.get(path, 0) + 1
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-weight[Path(str(item.path))], -count[Path(str(item.path))],
                                 str(item.path), position[id(item)]))
