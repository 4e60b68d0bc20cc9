"""Attacks on the verdict itself, run on both backends: the honest verdict, the same on each.

A program may try to forge its result (write where results travel, signal or
trace the runner), to carry state from one test to the next (files, POSIX and
SysV shared memory, message queues, semaphores, kernel keyrings), to see other
tests' inputs, or to open kernel surface (namespaces, mounts, BPF...).
"""

from __future__ import annotations

import os
import platform
import time
import uuid
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox, Verdict

pytestmark = pytest.mark.docker



@pytest.fixture(params=["bwrap", "docker"])
def backend(request: pytest.FixtureRequest) -> Sandbox:
    return request.getfixturevalue("sb" if request.param == "bwrap" else "docker_sb")


# Writes a forged "OK, 1 ms" result into every file and directory it can write
# (and into the runner's descriptors through /proc), signals and traces every
# other process, then spins forever: the honest verdict is TLE.
FORGER = r'''
import ctypes, os, signal, stat, sys
forged = b"S 0 1000 1000 100 1000 100 0 0 3 0 0\n3\n" * 1000
wrote = []
for top in sorted(os.listdir("/")):
    if top in ("proc", "sys"):
        continue
    for root, dirs, files in os.walk("/" + top):
        if root.startswith(("/usr", "/dev/pts")):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(root, name)
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue  # /dev/null and friends
                with open(path, "r+b") as f:
                    f.write(forged)
                wrote.append(path)
            except OSError:
                pass
        if os.access(root, os.W_OK):
            try:
                with open(os.path.join(root, "results"), "wb") as f:
                    f.write(forged)
                wrote.append(root)
            except OSError:
                pass
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    if int(pid) == os.getpid():
        continue
    for fd in ("0", "1", "2", "3", "4", "5"):
        try:
            with open(f"/proc/{pid}/fd/{fd}", "wb") as f:
                f.write(forged)
            wrote.append(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, int(pid), None, None) == 0:  # PTRACE_ATTACH
        wrote.append(f"ptrace {pid}")
    for sig in (signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(int(pid), sig)
        except OSError:
            pass
sys.stderr.write(repr(wrote) + "\n")
sys.stderr.flush()
while True:
    pass
'''


@pytest.mark.slow
@pytest.mark.alone
def test_a_program_cannot_forge_its_result(backend: Sandbox) -> None:
    prog = backend.compile("python3", FORGER)
    assert prog.ok, prog.message
    limits = Limits(time_s=1.5, wall_s=30)
    results = backend.run(prog, ["", ""], limits)
    assert [r.verdict for r in results] == [Verdict.TLE, Verdict.TLE], results
    for result in results:
        assert result.time_ms >= 1500
        assert result.stdout == b""
        # The verdict above is the guarantee. The program's own list of what it could write comes
        # last on stderr; now and then it is missing (the kill can overtake the report), and then
        # there is nothing more to check for that run.
        lines = result.stderr.strip().splitlines()
        if lines and lines[-1].startswith("["):
            wrote = eval(lines[-1])  # noqa: S307 - our own program's repr
            # only its own scratch is writable; no descriptor or process of the runner is reachable
            assert all(path.startswith(("/tmp", "/dev/shm", "/dev/mqueue", "/build")) for path in wrote), wrote
    # a program that finishes afterwards in the same batch is judged normally
    honest = backend.compile("python3", "print(int(input()) * 2)\n")
    assert [r.stdout for r in backend.run(honest, ["21\n", "4\n"], Limits())] == [b"42\n", b"8\n"]


PLANT_AND_LOOK = r'''
import ctypes, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEY = 0x4854
mode = input().strip()
def errno_of(rc):
    return 0 if rc >= 0 else ctypes.get_errno()
if mode == "plant":
    open("/tmp/planted", "w").write("x")
    open("/dev/shm/planted", "w").write("x")
    os.makedirs("/tmp/deep/er", exist_ok=True)
    os.chmod("/tmp/deep", 0)
    shm = libc.shmget(KEY, 4096, 0o1666)
    msg = libc.msgget(KEY, 0o1666)
    sem = libc.semget(KEY, 1, 0o1666)
    # add_key("user", "hts-planted", "x", 1, KEY_SPEC_USER_KEYRING)
    key = libc.syscall(248, b"user", b"hts-planted", b"x", 1, -4)
    key_errno = errno_of(key)
    if os.fork() == 0:
        os.setsid()
        s = socket.socket(socket.AF_UNIX)
        s.bind(b"\0hts-planted")
        s.listen()
        time.sleep(100)
    print("planted", shm >= 0, msg >= 0, sem >= 0, key_errno)
else:
    files = sorted(os.listdir("/tmp") + os.listdir("/dev/shm"))
    shm = libc.shmget(KEY, 0, 0) >= 0
    msg = libc.msgget(KEY, 0) >= 0
    sem = libc.semget(KEY, 0, 0) >= 0
    # request_key("user", "hts-planted", NULL, 0)
    key = libc.syscall(249, b"user", b"hts-planted", None, 0) >= 0
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(b"\0hts-planted")
        abstract = True
    except OSError:
        abstract = False
    ipcs = [len(open(f"/proc/sysvipc/{t}").read().splitlines()) - 1 for t in ("shm", "msg", "sem")]
    print("seen", files, shm, msg, sem, key, abstract, ipcs)
'''


def test_no_state_crosses_tests(backend: Sandbox) -> None:
    sb = backend
    if platform.machine() != "x86_64":
        pytest.skip("the keyring calls use x86_64 system call numbers")
    prog = sb.compile("python3", PLANT_AND_LOOK)
    assert prog.ok, prog.message
    plant, look, again = sb.run(prog, ["plant\n", "look\n", "look\n"], Limits(time_s=2))
    assert plant.verdict == Verdict.OK, plant.stderr
    assert plant.stdout.split()[:4] == [b"planted", b"True", b"True", b"True"], plant.stdout
    assert look.verdict == again.verdict == Verdict.OK, look.stderr
    expected = b"seen [] False False False False False [0, 0, 0]\n"
    assert look.stdout == again.stdout == expected
    assert plant.stdout.split()[4] == b"1"  # add_key: EPERM (seccomp) on both backends


# each call that opens kernel surface, with the errno it returned (0: allowed)
KERNEL_SURFACE = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(nr, *args)
    return 0 if rc >= 0 else ctypes.get_errno()
out = {
    "unshare_user": call(272, 0x10000000),
    "unshare_net": call(272, 0x40000000),
    "unshare_mount": call(272, 0x20000),
    "clone_newuser": call(56, 0x10000000 | 17, 0, 0, 0, 0),
    "setns": call(308, 0, 0),
    "mount": call(165, b"none", b"/tmp", b"tmpfs", 0, None),
    "umount2": call(166, b"/tmp", 2),
    "pivot_root": call(155, b"/tmp", b"/tmp"),
    "add_key": call(248, b"user", b"k", b"x", 1, -4),
    "keyctl": call(250, 0, -4, 0),
    "bpf": call(321, 0, None, 0),
    "perf_event_open": call(298, None, 0, -1, -1, 0),
    "userfaultfd": call(323, 0),
    "io_uring_setup": call(425, 1, None),
    "ptrace": call(101, 0, 0, 0, 0),
    "process_vm_readv": call(310, 1, None, 0, None, 0, 0),
    "init_module": call(175, None, 0, b""),
    "kexec_load": call(246, 0, 0, None, 0),
}
print(" ".join(f"{k}={v}" for k, v in out.items()))
'''


def test_kernel_surface_calls_fail_with_eperm(backend: Sandbox) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("x86_64 system call numbers")
    prog = backend.compile("python3", KERNEL_SURFACE)
    [result] = backend.run(prog, [""], Limits())
    assert result.verdict == Verdict.OK, result.stderr
    got = dict(item.split("=") for item in result.stdout.decode().split())
    denied = {name: int(value) for name, value in got.items()}
    assert denied == dict.fromkeys(denied, 1)  # EPERM, and the program lives on


INPUT_SNOOP = r'''
import os, sys
mine = input().strip()
found = set()
for top in sorted(os.listdir("/")):
    if top in ("proc", "sys", "usr", "lib", "lib64", "bin", "sbin", "etc", "dev"):
        continue
    for root, dirs, files in os.walk("/" + top):
        for name in files:
            try:
                data = open(os.path.join(root, name), "rb").read(1 << 20)
            except OSError:
                continue
            for word in data.split():
                if word.startswith(b"needle-"):
                    found.add(word.decode())
print(mine, sorted(found - {mine}))
'''


def test_only_the_current_input_is_visible(backend: Sandbox) -> None:
    prog = backend.compile("python3", INPUT_SNOOP)
    inputs = [f"needle-{i}\n" for i in range(4)]
    results = backend.run(prog, inputs, Limits())
    assert [r.stdout for r in results] == [f"needle-{i} []\n".encode() for i in range(4)]


def test_docker_program_runs_under_another_uid_than_the_runner(docker_sb: Sandbox) -> None:
    source = ("import os\nrunner = [l.split()[1] for l in open('/proc/1/status') if l.startswith('Uid:')][0]\n"
              "caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff:')][0]\n"
              "print(os.getuid(), runner, caps, os.access('/.hts-priv', os.X_OK))\n")
    [result] = docker_sb.run(docker_sb.compile("python3", source), [""], Limits())
    uid, runner_uid, caps, private = result.stdout.split()
    assert uid != runner_uid and int(uid) != 0
    assert int(caps, 16) == 0  # not a single capability
    if os.geteuid() == 0:
        assert private == b"False"  # the runner's directory (output files, counters) is closed to it


def test_docker_one_container_per_batch(docker_sb: Sandbox) -> None:
    # the container's hostname is its id: every test of a batch, re-runs included, sees the same one
    source = "import socket\nprint(open('/proc/1/stat').read().split()[21])\n"
    prog = docker_sb.compile("python3", source)
    results = docker_sb.run(prog, [""] * 4, Limits())
    assert len({r.stdout for r in results}) == 1, results
    # the batch cgroup is gone with the batch, in every hierarchy the engine used
    assert list(Path("/sys/fs/cgroup").glob(f"*/hardtests-docker/d-{os.getpid()}-*")) == []


def test_docker_output_is_not_charged_as_memory(docker_sb: Sandbox) -> None:
    source = "import sys\nline = 'x' * 1023 + '\\n'\nfor _ in range(60 * 1024):\n    sys.stdout.write(line)\n"
    [result] = docker_sb.run(docker_sb.compile("python3", source), [""], Limits(memory_mb=48, output_kb=64 * 1024))
    assert result.verdict == Verdict.OK, (result.verdict, result.memory_kb, result.stderr)
    assert len(result.stdout) == 60 * 1024 * 1024  # more than the memory limit and the runner's room


# a child burns the CPU and is never waited for, so rusage would not see it; the cgroup does
UNREAPED_BURNER = r'''
import os, time
pid = os.fork()
if pid == 0:
    while time.process_time() < 1.5:
        pass
    os._exit(0)
while open(f"/proc/{pid}/stat").read().split()[2] != "Z":
    time.sleep(0.01)
print("done")
'''


@pytest.mark.slow
def test_cpu_of_a_child_never_waited_for_counts(backend: Sandbox) -> None:
    prog = backend.compile("python3", UNREAPED_BURNER)
    [result] = backend.run(prog, [""], Limits(time_s=1, wall_s=30))
    assert result.verdict == Verdict.TLE, result
    assert result.time_ms >= 1000


def test_docker_compile_of_a_terminal_device_is_a_quick_ce(docker_sb: Sandbox) -> None:
    # no pseudo-terminals at all: a pty master would block the compiler until the wall clock
    for device in ("/dev/ptmx", "/dev/pts/ptmx", "/dev/tty"):
        started = time.monotonic()
        prog = docker_sb.compile("cpp", f'#include "{device}"\n// {uuid.uuid4()}\nint main(){{}}\n')
        assert prog.verdict == Verdict.CE, prog
        assert device in prog.message
        assert time.monotonic() - started < 30
