"""A worker kept to some CPUs keeps its sandboxes there: bubblewrap's processes inherit the
worker's affinity, and the Docker backend gives a container the same CPUs as its cpuset (the
engine's cpuset cgroup would otherwise give it every CPU again)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from sandbox import Limits, Sandbox

ALLOWED = "print(open('/proc/self/status').read().split('Cpus_allowed_list:')[1].split()[0])\n"


@pytest.fixture
def one_cpu() -> Iterator[int]:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: nothing to keep a sandbox off")
    before = os.sched_getaffinity(0)  # (the serial pass already keeps each test process to one)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)


def test_a_pinned_worker_s_sandbox_runs_on_its_cpu_alone(any_sb: Sandbox, one_cpu: int) -> None:
    prog = any_sb.compile("python3", ALLOWED)
    assert prog.ok, prog.message
    results = any_sb.run(prog, [b"", b""], Limits(time_s=2))
    assert [r.stdout.decode().strip() for r in results] == [str(one_cpu)] * 2, results
