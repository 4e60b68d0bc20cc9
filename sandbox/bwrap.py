"""The default backend: one bubblewrap sandbox per batch with hts-runner inside."""

from __future__ import annotations

import functools
import os
import select
import shutil
import subprocess
import tempfile
from typing import Any, BinaryIO

from . import cache, cgroups, languages
from .base import MB, NO_CPU_ACCOUNTING, Batch, BatchSpec, RawResult, Sandbox, rusage_allowed
from .types import SandboxUnavailable

IO_DIR = "/.hts-io"
IN_DIR = "/.hts-in"
BIN_DIR = "/.hts-bin"
# read-only pieces of /etc that the toolchains need (the JVM's config is symlinked there)
ETC_PIECES = ("/etc/alternatives", "/etc/java-17-openjdk", "/etc/ld.so.cache")
MISSING = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
# A minimal /dev: no terminals (a compile that includes /dev/tty would wait forever), and
# /dev/random is urandom, which never blocks.  /dev/shm is a fresh tmpfs per test (hts-runner).
DEVICES = (("/dev/null", "/dev/null"), ("/dev/zero", "/dev/zero"), ("/dev/full", "/dev/full"),
           ("/dev/urandom", "/dev/urandom"), ("/dev/urandom", "/dev/random"))
DEV_LINKS = (("/proc/self/fd", "/dev/fd"), ("/proc/self/fd/0", "/dev/stdin"), ("/proc/self/fd/1", "/dev/stdout"),
             ("/proc/self/fd/2", "/dev/stderr"))


def read_result(stream: BinaryIO) -> RawResult | None:
    """One result in hts-runner's framing: a header line, then stdout, then the stderr tail."""
    header = stream.readline().split()
    if len(header) != 12 or header[0] != b"S":
        return None
    fields = [int(x) for x in header[1:]]
    out = stream.read(fields[8])
    err = stream.read(fields[10])
    return RawResult(
        status=fields[0], cpu_us=fields[1], wall_us=fields[2], maxrss_kb=fields[3], cg_cpu_us=fields[4],
        cg_mem_kb=fields[5], oom_kills=fields[6], killed=fields[7], stdout=out,
        stdout_truncated=bool(fields[9]), stderr=err,
    )


def runner_options(spec: BatchSpec, *, cgroup: bool) -> list[str]:
    limits = spec.limits
    mem = limits.memory_mb * MB
    if spec.is_java or cgroup:
        # The cgroup bounds real memory; reserved address space is not memory (every
        # thread reserves a stack of RLIMIT_STACK, the JVM reserves gigabytes), so no
        # RLIMIT_AS: with one, 16 threads would not fit.
        address_space, stack = 0, mem
    else:
        # no memory cgroup (rusage-only, or a backend that bounds memory itself and says
        # cgroup=False): the address space is the only bound here, and deep recursion
        # needs the stack; threads then share the address space with that stack
        address_space, stack = mem + 64 * MB, mem
    return [
        "-t", str(spec.cpu_kill_us()),
        "-w", str(spec.wall_us()),
        "-W", str(spec.starved_wall_us()),
        "-m", str(address_space),
        "-f", str(limits.output_kb * 1024 + 1),
        # the user namespace's uid 0 also owns bwrap's and the runner's processes
        "-p", str(spec.nproc() + 4),
        "-n", "1024" if spec.is_java else "256",
        "-s", str(stack),
        "-z", str(mem),
        "-d", spec.workdir,
        "-o", IO_DIR,
        "-i", IN_DIR,
    ]


def _dev_args(*, compile_step: bool) -> list[str]:
    args: list[str] = []
    # a compiler needs no device but /dev/null: `#include "/dev/zero"` then fails at once
    for source, target in DEVICES[:1] if compile_step else DEVICES:
        args += ["--dev-bind", source, target]
    for source, target in DEV_LINKS:
        args += ["--symlink", source, target]
    return [*args, "--dir", "/dev/shm"]


def userns_args(bwrap: str) -> list[str]:
    """--disable-userns where this bubblewrap has it (0.8+): no user namespace can be made inside."""
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["--unshare-user", "--disable-userns"] if "--disable-userns" in text else []


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for piece in ETC_PIECES:
        args += ["--ro-bind-try", piece, piece]
    return args


@functools.cache
def _setpriv() -> str | None:
    return shutil.which("setpriv", path="/usr/bin:/bin")


def as_sandbox_user(argv: list[str]) -> tuple[list[str], dict[str, Any]]:
    """argv and Popen keywords that run it as the sandbox's uid (nobody, with no supplementary
    groups, when we are root; as we are otherwise).

    setpriv (util-linux) switches the uid after the exec, so Popen can vfork. Asking Popen to
    switch it (user=, group=) makes _posixsubprocess fork() instead, which copies this
    process's page tables: 3 ms at 70 MB of RSS and 12 ms at 270 MB, for every batch.
    """
    uid = cache.sandbox_uid()
    if uid is None:
        return argv, {}
    setpriv = _setpriv()
    if setpriv is None:
        return argv, {"user": uid, "group": uid, "extra_groups": []}
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *argv], {}


class BwrapBatch(Batch):
    def __init__(self, sandbox: BwrapSandbox, spec: BatchSpec) -> None:
        self.spec = spec
        self.cgroup = cgroups.open_batch(spec.memory_bytes(), spec.nproc() + 2)
        if self.cgroup is None:
            if not rusage_allowed():
                raise SandboxUnavailable(NO_CPU_ACCOUNTING)
            self.accounting = "rusage"
        bounded = self.cgroup is not None and self.cgroup.bounds_memory
        runner = [f"{BIN_DIR}/hts-runner", *runner_options(spec, cgroup=bounded)]
        if self.cgroup is not None:
            runner += self.cgroup.runner_args()
        argv = [
            sandbox.bwrap, "--unshare-all", *sandbox.userns, "--die-with-parent", "--new-session", "--clearenv",
            "--uid", "0", "--gid", "0", "--cap-add", "ALL", "--hostname", "sandbox",
            *_system_binds(),
            "--proc", "/proc", *_dev_args(compile_step=spec.build_dir is not None), "--dir", "/tmp",
            "--tmpfs", IO_DIR,
            "--ro-bind", str(spec.inputs_dir), IN_DIR,
            "--ro-bind", str(sandbox.runner_dir), BIN_DIR,
        ]
        if spec.prog_dir is not None:
            argv += ["--ro-bind", str(spec.prog_dir), languages.PROG_DIR]
        if spec.pch_dir is not None:
            argv += ["--ro-bind", str(spec.pch_dir), languages.PCH_DIR]
        if spec.build_dir is not None:
            argv += ["--bind", str(spec.build_dir), languages.BUILD_DIR]
        program = spec.argv
        if spec.zygote:
            # python3 -I zygote.py -- main.py: the runner starts it once and forks each test from it
            runner.append("-Z")
            program = [spec.argv[0], "-I", f"{BIN_DIR}/zygote.py", "--", *spec.argv[2:]]
        argv += ["--remount-ro", "/", "--chdir", "/", *runner, "--", *program]
        argv, as_user = as_sandbox_user(argv)
        self.errors = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
                pass_fds=self.cgroup.fds if self.cgroup else (), env={}, cwd="/", **as_user,
            )
        except OSError:
            self._release()
            raise

    def _runner_error(self, what: str) -> SandboxUnavailable:
        self.errors.seek(0)
        detail = self.errors.read().decode("utf-8", "replace").strip()[-2000:]
        return SandboxUnavailable(f"{what}: {detail or 'no message'}")

    def run(self, index: int) -> RawResult:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        target = "-" if index < 0 else f"{IN_DIR}/{index}"
        try:
            self.proc.stdin.write(f"R {target}\n".encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise self._runner_error("the sandbox runner exited") from None
        # the runner enforces the wall clock itself; this only guards against a wedged runner
        ready, _, _ = select.select([self.proc.stdout], [], [], self.spec.wall_us() / 1e6 + 30)
        if not ready:
            self.proc.kill()
            raise SandboxUnavailable("the sandbox runner stopped answering")
        result = read_result(self.proc.stdout)
        if result is None:
            raise self._runner_error("the sandbox runner failed")
        if self.cgroup is not None and result.cg_cpu_us < 0:
            # the test could not join its cgroup: its figures are rusage only
            if not rusage_allowed():
                raise self._runner_error(NO_CPU_ACCOUNTING)
            self.accounting = "rusage"
        return result

    def _release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None
        self.errors.close()

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._release()


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self) -> None:
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable(MISSING)
        self.bwrap = found
        self.runner_dir = cache.runner_dir()
        self.userns = userns_args(found)
        self._probe()

    def _probe(self) -> None:
        """Fail early and clearly where user namespaces are not allowed."""
        argv, as_user = as_sandbox_user(
            [self.bwrap, "--unshare-all", *self.userns, "--die-with-parent", "--uid", "0", "--cap-add", "ALL",
             *_system_binds(), "--ro-bind", str(self.runner_dir), BIN_DIR, "--", "/usr/bin/true"])
        proc = subprocess.run(argv, capture_output=True, text=True, env={}, cwd="/", **as_user)
        if proc.returncode != 0:
            raise SandboxUnavailable(
                "bubblewrap cannot create its namespaces here (are unprivileged user namespaces "
                f"enabled? sysctl kernel.unprivileged_userns_clone=1): {proc.stderr.strip()}"
            )

    def open_batch(self, spec: BatchSpec) -> Batch:
        return BwrapBatch(self, spec)
