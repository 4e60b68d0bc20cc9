"""The fast tier (tests/tiers.py, tests/conftest.py): what it leaves out, and that a test put in
it wrongly fails instead of passing by luck."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.tiers import NOT_FAST_MODULES, REPO

PROBES = '''
import threading

def test_reaches_redis():
    from core.queues import redis_connection
    redis_connection().ping()

def test_reaches_the_sandbox():
    from sandbox import get_sandbox
    get_sandbox("bwrap")

def test_hides_its_sandbox_error_in_a_thread():
    from sandbox import get_sandbox
    def judge():
        try:
            get_sandbox("bwrap")
        except BaseException:
            pass  # as product code that turns a failure into a verdict would
    worker = threading.Thread(target=judge)
    worker.start()
    worker.join()

def test_starts_a_worker_against_the_test_services():
    from tests.conftest import worker_env
    worker_env()

def test_needs_none_of_them(db):
    from django.contrib.auth.models import User
    assert User.objects.count() == 0
'''


def pytest_run(*args: str, tier: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HARDTESTS_TEST_TIER"))}
    env["HARDTESTS_TEST_TIER"] = tier
    env["COLUMNS"] = "2000"  # the short summary keeps each failure's whole message
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nomigrations", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_a_test_that_reaches_redis_the_sandbox_or_a_worker_fails_in_the_fast_tier(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBES)
    # a file outside tests/ gets the suite's conftest as a plugin, and its configuration
    result = pytest_run("-rf", "-p", "tests.conftest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO),
                        str(probe), tier="fast")
    out = result.stdout
    assert result.returncode == 1, out[-3000:]
    assert re.search(r"\b4 failed, 1 passed\b", out), out[-3000:]
    failed = dict(re.findall(r"^FAILED \S*::(\w+)(?: - (.*))?$", out, re.M))
    assert set(failed) == {"test_reaches_redis", "test_reaches_the_sandbox",
                           "test_hides_its_sandbox_error_in_a_thread", "test_starts_a_worker_against_the_test_services"}
    assert "FastTierViolation: Redis in the fast tier" in failed["test_reaches_redis"]
    assert "FastTierViolation: the sandbox in the fast tier" in failed["test_reaches_the_sandbox"]
    assert "FastTierViolation: a subprocess against the test services" in \
        failed["test_starts_a_worker_against_the_test_services"]
    assert "the test reached the sandbox (caught and hidden on the way)" in out


def test_the_fast_tier_leaves_out_what_tiers_lists_and_keeps_the_rest() -> None:
    files = ["tests/review/test_eval_metrics.py", "tests/sandbox/test_cache.py", "tests/problems/test_judging.py",
             "tests/web/test_matrix.py"]
    listed = pytest_run("--collect-only", *files, tier="fast").stdout
    everything = pytest_run("--collect-only", *files, tier="").stdout
    fast = {line for line in listed.splitlines() if "::" in line}
    every = {line for line in everything.splitlines() if "::" in line}
    assert fast < every
    assert {line.split("::")[0] for line in fast} == {"tests/review/test_eval_metrics.py", "tests/web/test_matrix.py"}
    # the one matrix test that judges in the sandbox stays out; the page tests stay in
    assert "tests/web/test_matrix.py::test_judging_records_the_failing_output_and_message" in every - fast
    assert len([line for line in fast if "test_matrix.py" in line]) >= 5


def test_every_entry_of_the_list_names_a_file_or_test_that_exists() -> None:
    for entry in NOT_FAST_MODULES:
        path, _, name = entry.partition("::")
        assert (REPO / path).exists(), entry
        if name:
            assert re.search(rf"^def {re.escape(name)}\(", (REPO / path).read_text(encoding="utf-8"), re.M), entry
