"""The default backend: one bubblewrap sandbox per batch with hts-runner inside."""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import logging
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from . import cache, cgroups, languages
from .base import MB, NO_CPU_ACCOUNTING, Batch, BatchSpec, RawResult, Sandbox, rusage_allowed, zygote_enabled
from .types import SandboxUnavailable

log = logging.getLogger(__name__)

IO_DIR = "/.hts-io"
IN_DIR = "/.hts-in"
BIN_DIR = "/.hts-bin"
# read-only pieces of /etc that the toolchains need (the JVM's config is symlinked there)
ETC_PIECES = ("/etc/alternatives", "/etc/java-17-openjdk", "/etc/ld.so.cache")
WARM_ENV = "HARDTESTS_SANDBOX_WARM"
SPARE_NICE_ENV = "HARDTESTS_SANDBOX_SPARE_NICE"
# RLIMIT_NICE's value that lets a process set its nice back to 0 (the ceiling is 20 - limit)
NICE_ZERO_LIMIT = 20
CAP_SYS_NICE = 23
SPARE_PREFIX = "hts-spare-"
# a spare normally comes up in ~10 ms; one that has not after this is dropped
SPARE_READY_S = 30.0
# spares start this long after the last batch of this process ended
SPARE_AFTER_S = 0.01
# ... or once batches have kept running this long (a long judging, or back-to-back batches)
SPARE_DEFER_MAX_S = 0.25
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


class AnswerStream:
    """A runner's answers, read straight from its descriptor with a deadline for each read.
    (A buffered reader may hold an answer it read ahead with the last, where select does
    not see it: with a test asked for ahead, the next answer often comes with the last.)"""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.out = bytearray()
        self.eof = False
        self.deadline = 0.0
        # readable once the batch is aborted (Batch.abort): a wait for an answer ends at once,
        # whether or not every process holding the runner's pipe is gone yet
        self.wake: int | None = None

    def _wait(self, left: float) -> None:
        watched = [self.fd] if self.wake is None else [self.fd, self.wake]
        ready, _, _ = select.select(watched, [], [], max(left, 0))
        if self.wake is not None and self.wake in ready:
            raise SandboxUnavailable("the batch was aborted")
        if not ready:
            raise TimeoutError

    def _recv(self) -> bytes:
        return os.read(self.fd, 1 << 20)

    def _take(self, chunk: bytes) -> None:
        self.out += chunk

    def _fill(self) -> None:
        self._wait(self.deadline - time.monotonic())
        chunk = self._recv()
        if not chunk:
            self.eof = True
            return
        self._take(chunk)

    def readline(self) -> bytes:
        while b"\n" not in self.out and not self.eof:
            self._fill()
        end = self.out.find(b"\n") + 1 or len(self.out)
        line = bytes(self.out[:end])
        del self.out[:end]
        return line

    def read(self, size: int) -> bytes:
        if not self.framed and len(self.out) < size:
            return self._read_into(size)  # type: ignore[return-value]  # bytes-like, not copied
        while len(self.out) < size and not self.eof:
            self._fill()
        data = bytes(self.out[:size])
        del self.out[:size]
        return data

    # Docker's attach stream interleaves frames of stdout and stderr (see AttachStream)
    framed = False

    def _read_into(self, size: int) -> bytearray:
        """A large answer (a program's stdout, up to its output limit) read straight into one
        buffer of its size, never past it, and returned as it is: Sandbox.run keeps a prefix
        of it as bytes, so the worker never holds two copies of a whole output."""
        body = bytearray(size)
        have = len(self.out)
        body[:have] = self.out
        self.out.clear()
        with memoryview(body) as view:
            while have < size:
                self._wait(self.deadline - time.monotonic())
                got = os.readv(self.fd, [view[have:]])
                if got == 0:
                    self.eof = True
                    break
                have += got
        del body[have:]
        return body


def runner_options(spec: BatchSpec, *, cgroup: bool) -> list[str]:
    return [*limit_options(spec, cgroup=cgroup), "-o", IO_DIR, "-i", IN_DIR]


def limit_options(spec: BatchSpec, *, cgroup: bool) -> list[str]:
    """The runner's options that depend on the batch (all that a spare learns late, `-C`)."""
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
        "-e", str(spec.idle_kill_us()),
        "-m", str(address_space),
        "-f", str(limits.output_kb * 1024 + 1),
        # the user namespace's uid 0 also owns bwrap's, the runner's and its launcher's processes
        "-p", str(spec.nproc() + 5),
        "-n", "1024" if spec.is_java else "256",
        "-s", str(stack),
        "-z", str(mem),
        "-d", spec.workdir,
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


def _cgroup_pids(spec: BatchSpec) -> int:
    # the test's init, and (cgroup v1, no zygote) the runner's launcher, live in it too
    return spec.nproc() + 3


def _shape(spec: BatchSpec) -> tuple[Any, ...] | None:
    """What a spare sandbox must have been started with to serve `spec` (None: spec is not a
    run of a compiled program, and always gets a sandbox started for it)."""
    if spec.prog_dir is None or spec.build_dir is not None or spec.pch_dir is not None:
        return None
    return (tuple(spec.argv), spec.zygote, spec.workdir, spec.language, str(spec.inputs_dir.parent))


class _Started:
    """One bubblewrap sandbox with hts-runner inside, from its start to its end.

    Started for a batch (its inputs and program bound where they are), or as a spare for
    batches of one shape: then it binds directories of its own, which the batch it serves
    fills (hard links) before it sends the runner its limits (`-C`)."""

    def __init__(self, sandbox: BwrapSandbox, spec: BatchSpec, *, spare: bool) -> None:
        self.spec = spec
        self.in_dir = self.prog_dir = None
        # a spare serving a batch: where its inputs are, each linked in as it is asked for
        self.lazy_inputs: Path | None = None
        self.linked: set[int] = set()
        # what this sandbox binds of the cache: links of its own (see cache.batch_view)
        self.views: list[Path] = []
        self.is_ready = False
        self.nice = 0  # a spare's while it waits (-L)
        self.started_at = time.monotonic()
        self.ready_lock = threading.Lock()
        self.accounting = "cgroup"
        wait_nice = spare_nice() if spare else 0
        # the batch's CPU cgroup (which the runner joins at its start) weighs the least while
        # a spare waits at a low priority; the batch that takes it gets the harness's weight
        self.cgroup = cgroups.open_batch(spec.memory_bytes(), _cgroup_pids(spec), held_back=wait_nice > 0)
        self.errors = tempfile.TemporaryFile()
        try:
            if self.cgroup is None:
                if not rusage_allowed():
                    raise SandboxUnavailable(NO_CPU_ACCOUNTING)
                self.accounting = "rusage"
            self.bounded = self.cgroup is not None and self.cgroup.bounds_memory
            runner = [f"{BIN_DIR}/hts-runner", "-o", IO_DIR, "-i", IN_DIR]
            if spare:
                runner.append("-C")
                self.nice = wait_nice
                if self.nice:
                    runner += ["-L", str(self.nice)]
                self.in_dir = cache.make_private_dir(spec.inputs_dir.parent, prefix=SPARE_PREFIX)
                self.prog_dir = cache.make_private_dir(cache.memory_root(), prefix=SPARE_PREFIX)
            else:
                runner += limit_options(spec, cgroup=self.bounded)
            if self.cgroup is not None:
                runner += self.cgroup.runner_args()
            argv = [
                sandbox.bwrap, "--unshare-all", *sandbox.userns, "--die-with-parent", "--new-session", "--clearenv",
                "--uid", "0", "--gid", "0", "--cap-add", "ALL", "--hostname", "sandbox",
                *_system_binds(),
                "--proc", "/proc", *_dev_args(compile_step=spec.build_dir is not None), "--dir", "/tmp",
                "--tmpfs", IO_DIR,
                "--ro-bind", str(self.in_dir or spec.inputs_dir), IN_DIR,
                "--ro-bind", str(sandbox.runner_dir), BIN_DIR,
            ]
            if spec.prog_dir is not None:
                argv += ["--ro-bind", str(self.prog_dir or self._view(spec.prog_dir)), languages.PROG_DIR]
            if spec.pch_dir is not None:
                argv += ["--ro-bind", str(cache.tool_view(spec.pch_dir)), languages.PCH_DIR]
            if spec.build_dir is not None:
                argv += ["--bind", str(spec.build_dir), languages.BUILD_DIR]
            program = spec.argv
            if spec.zygote:
                # python3 -I zygote.py -- main.py: the runner starts it once and forks each test from it
                runner.append("-Z")
                program = [spec.argv[0], "-I", f"{BIN_DIR}/zygote.py", "--", *spec.argv[2:]]
            argv += ["--remount-ro", "/", "--chdir", "/", *runner, "--", *program]
            argv, as_user = as_sandbox_user(argv)
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
                pass_fds=self.cgroup.fds if self.cgroup else (), env={}, cwd="/", **as_user,
            )
        except BaseException:
            self.release()
            raise

    def _view(self, entry: Path) -> Path:
        view = cache.program_view(entry)
        self.views.append(view)
        return view

    def ready(self, timeout_s: float) -> bool:
        """A spare: whether its runner came up and waits for its limits."""
        assert self.proc.stdout is not None
        with self.ready_lock:  # settle() may look while a batch takes it
            if not self.is_ready:
                readable, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
                self.is_ready = bool(readable) and self.proc.stdout.readline() == b"ready\n"
            return self.is_ready

    def age(self) -> float:
        return time.monotonic() - self.started_at

    def serve(self, spec: BatchSpec) -> None:
        """A spare takes on `spec`: its program linked in, its limits set; each input is linked
        in as its test is asked for (link_input): a wrong program's batch that ends on its
        first test links one input, not the suite's forty (about 1 ms of its start)."""
        assert self.in_dir is not None and self.prog_dir is not None and spec.prog_dir is not None
        self.lazy_inputs = spec.inputs_dir
        cache.link_program(spec.prog_dir, self.prog_dir)
        if self.cgroup is not None:
            self.cgroup.set_limits(spec.memory_bytes(), _cgroup_pids(spec))
        self.spec = spec
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"C {' '.join(limit_options(spec, cgroup=self.bounded))}\n".encode())

    def link_input(self, index: int) -> None:
        """A spare serving a batch: input `index` linked into its own inputs directory, once."""
        if self.lazy_inputs is not None and self.in_dir is not None and index not in self.linked:
            cache.link_file(self.lazy_inputs / str(index), self.in_dir / str(index))
            self.linked.add(index)

    def kill(self) -> None:
        """SIGKILL every process of this sandbox now: bubblewrap, its init (pid 1 of the
        sandbox, which does not always die with bubblewrap and then holds the runner's pipes
        open), the runner, its launcher and every process of the tests (the batch cgroup)."""
        found: list[int] = []
        with contextlib.suppress(OSError):
            for pid, _ in process_threads(self.proc.pid):
                if pid not in found:
                    found.append(pid)
        if self.cgroup is not None:
            found += [pid for pid in self.cgroup.pids() if pid not in found]
        self.proc.kill()
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def end_input(self) -> None:
        """No more commands: the runner exits once it has finished the last (its test's
        leftovers killed and its unix garbage collected, as after every test)."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except BrokenPipeError:
            pass

    def stop(self) -> None:
        """End the runner (it exits at the end of its commands) and free what it held."""
        self.end_input()
        try:
            # Popen.wait with a timeout polls with growing sleeps (2-3 ms late at a batch's
            # end); a pidfd says at once when the runner has exited
            with contextlib.suppress(OSError):
                watch = os.pidfd_open(self.proc.pid)
                try:
                    select.select([watch], [], [], 5)
                finally:
                    os.close(watch)
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.release()

    def release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None
        for path in (self.in_dir, self.prog_dir, *self.views):
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
        self.in_dir = self.prog_dir = None
        self.views = []
        self.errors.close()


class Spares:
    """Sandboxes started before they are needed, so that a batch does not wait ~10 ms for
    bubblewrap and the runner to come up.

    A spare has run nothing: a batch gets it as fresh as one started for it (its own
    namespaces, cgroup and directories), only started earlier. After a batch of a given
    shape (program argv, language, zygote) ends, a thread of this process starts spares
    for that shape until there are HARDTESTS_SANDBOX_WARM of them (default: the CPU count,
    one per judging lane); the two most recent shapes keep theirs. Only a long-lived process
    that asks for it keeps spares (`keep_warm()`: the sandbox worker, the benches): a forked
    child starts with none and keeps none, so a work horse that ends with os._exit leaves
    nothing behind."""

    MAX_SHAPES = 2

    def __init__(self) -> None:
        self.count = 0
        self.sandbox: BwrapSandbox | None = None
        self.lock = threading.Condition()
        self.spares: collections.OrderedDict[tuple[Any, ...], list[_Started]] = collections.OrderedDict()
        self.wanted: collections.OrderedDict[tuple[Any, ...], BatchSpec] = collections.OrderedDict()
        self.thread: threading.Thread | None = None
        self.starting = False
        self.wanted_at = 0.0
        # batches of this process running now, and since when some have been: a spare's
        # start (setpriv, bubblewrap's namespaces and mounts at normal priority, this
        # process's Popen) took 2-8 ms of CPU beside the lanes of the batch that took the
        # last spare, on the cores its tests needed
        self.running = 0
        self.busy_since = 0.0

    def enable(self, sandbox: BwrapSandbox, count: int) -> None:
        with self.lock:
            self.sandbox, self.count = sandbox, count
            self.lock.notify_all()  # with none wanted the thread stops the spares there are
            if count > 0 and self.thread is None:
                # bubblewrap dies with the thread that started it (--die-with-parent is a
                # parent-death signal, which follows the thread): this one lives as long as we do
                self.thread = threading.Thread(target=self._fill, name="sandbox-spares", daemon=True)
                self.thread.start()

    def take(self, spec: BatchSpec) -> _Started | None:
        shape = _shape(spec)
        if shape is None or self.count <= 0:
            return None
        spare = self._take_up(shape) if spare_nice() else self._take_first(shape)
        if spare is None or not spare.nice:
            return spare
        try:
            _normal_priority(spare.proc.pid)
        except PermissionError as exc:
            # not ours to renice after all: drop this spare, start later ones at normal priority
            log.warning("cannot bring a spare sandbox back to normal priority (%s); spares now start at it", exc)
            _RENICE_FAILED.set()
            spare.stop()
            return None
        except OSError:
            spare.stop()  # it ended while we looked (killed): the batch starts its own
            return None
        return spare

    def _take_first(self, shape: tuple[Any, ...]) -> _Started | None:
        with self.lock:
            found = self.spares.get(shape)
            spare = found.pop(0) if found else None
        if spare is None:
            return None
        if spare.ready(SPARE_READY_S):
            return spare
        spare.stop()  # it did not come up: the batch starts its own, which reports why
        return None

    def _take_up(self, shape: tuple[Any, ...]) -> _Started | None:
        """A spare of `shape` that is up now, never one still coming up: at a spare's low
        priority, busy cores may hold that back for long, and the batch would wait with it.
        Then the batch starts its own sandbox, at normal priority."""
        dead = []
        with self.lock:
            found = self.spares.get(shape, [])
            spare = next((s for s in found if s.ready(0) and s.proc.poll() is None), None)
            if spare is not None:
                found.remove(spare)
            else:
                dead = [s for s in found if s.proc.poll() is not None or s.age() > SPARE_READY_S]
                for s in dead:
                    found.remove(s)
            self.lock.notify_all()
        for s in dead:
            s.stop()
        return spare

    def begin(self) -> None:
        """A batch starts: no spare starts while it runs (up to SPARE_DEFER_MAX_S)."""
        with self.lock:
            if self.running == 0:
                self.busy_since = time.monotonic()
            self.running += 1

    def end(self) -> None:
        """A batch that began did not start after all."""
        with self.lock:
            self.running = max(0, self.running - 1)
            self.lock.notify_all()

    def want(self, spec: BatchSpec) -> None:
        """After a batch of `spec`'s shape (which called begin()): keep spares for that shape."""
        shape = _shape(spec)
        with self.lock:
            self.running = max(0, self.running - 1)
            self.wanted_at = time.monotonic()
            if shape is not None and self.count > 0:
                self.wanted[shape] = spec
                self.wanted.move_to_end(shape)
            self.lock.notify_all()

    def _deferred(self) -> float:
        """Under the lock: how long a spare's start should still wait (0: now)."""
        now = time.monotonic()
        quiet = SPARE_AFTER_S - (now - self.wanted_at)
        if self.running > 0:
            quiet = max(quiet, SPARE_DEFER_MAX_S - (now - self.busy_since))
        return quiet

    def _fill(self) -> None:
        while True:
            with self.lock:
                self.starting = False
                self.lock.notify_all()
                while True:
                    retired = self._retire()
                    job = self._wanted_next()
                    if retired:
                        job = None  # stop these first, then look again
                        break
                    # after a batch, its caller first gets its answer out (a worker's job
                    # result); a spare started at once would compete with it for the CPU,
                    # as one started while batches run competes with their tests
                    quiet = self._deferred()
                    if job is not None and quiet <= 0:
                        break
                    self.lock.wait(quiet if job is not None else None)
                self.starting = True
            for spare in retired:
                spare.stop()
            if job is None:
                continue
            shape, spec = job
            assert self.sandbox is not None
            try:
                started = _Started(self.sandbox, spec, spare=True)
            except (OSError, SandboxUnavailable):
                with self.lock:
                    self.wanted.pop(shape, None)  # a batch will start its own and say why
                continue
            with self.lock:
                kept = shape in self._kept()
                if kept:
                    self.spares.setdefault(shape, []).append(started)
            if not kept:
                started.stop()

    def _kept(self) -> list[tuple[Any, ...]]:
        """Under the lock: the kinds of batch that keep spares (the most recent ones)."""
        return list(self.wanted)[-self.MAX_SHAPES:] if self.count > 0 else []

    def _behind(self) -> bool:
        """Under the lock: whether the thread has spares to start or to stop."""
        kept = self._kept()
        return (self._wanted_next() is not None
                or any(found for shape, found in self.spares.items() if shape not in kept))

    def _retire(self) -> list[_Started]:
        """Under the lock: take out the spares of kinds no longer kept (the caller stops them)."""
        while len(self.wanted) > self.MAX_SHAPES:
            self.wanted.popitem(last=False)
        kept = self._kept()
        return [s for shape in list(self.spares) if shape not in kept for s in self.spares.pop(shape)]

    def _wanted_next(self) -> tuple[tuple[Any, ...], BatchSpec] | None:
        """Under the lock: the kind of batch to start a spare for next, most recent first."""
        for shape in reversed(self._kept()):
            if len(self.spares.get(shape, ())) < self.count:
                return shape, self.wanted[shape]
        return None

    def settle(self, timeout_s: float = SPARE_READY_S) -> int:
        """Wait until every spare wanted so far has started and come up; how many there are
        (the benches count a spare's start as part of the batch that asked for it)."""
        deadline = time.monotonic() + timeout_s
        with self.lock:
            while self.thread is not None and (self.starting or self._behind()):
                if not self.lock.wait(max(0.0, deadline - time.monotonic())):
                    break
            spares = [s for found in self.spares.values() for s in found]
        return sum(spare.ready(max(0.0, deadline - time.monotonic())) for spare in spares)

    def stop_all(self) -> None:
        with self.lock:
            spares = [s for found in self.spares.values() for s in found]
            self.spares.clear()
            self.wanted.clear()
        for spare in spares:
            spare.stop()

    def forget(self) -> None:
        """In a forked child: the parent's spares are not ours (their pipes are closed here)."""
        for found in self.spares.values():
            for spare in found:
                for stream in (spare.proc.stdin, spare.proc.stdout):
                    if stream is not None:
                        with contextlib.suppress(OSError):
                            os.close(stream.fileno())
        self.__init__()  # type: ignore[misc]


SPARES = Spares()
os.register_at_fork(after_in_child=SPARES.forget)
atexit.register(SPARES.stop_all)


class Reaper:
    """Ends the sandboxes of batches that are over, off their callers' path.

    A batch's answers are all in when it closes; what is left is waiting for its runner,
    bubblewrap and the launcher to exit, then removing its cgroup (which the kernel frees a
    moment after its last process: rmdir is retried) and its directories: 1.5-6 ms a batch,
    which the caller (a judging lane, and through it the API's answer) used to wait for.
    Every test of the batch has already ended with its namespaces (the runner reaps each
    test's init before it reads its next command), so nothing left here can reach another
    batch, which has a sandbox, cgroup and directories of its own."""

    # the caller first gets its answer out (a lane's result, a worker's reply), as spares wait
    AFTER_S = SPARE_AFTER_S

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.pending: list[tuple[float, _Started]] = []
        self.busy = 0
        self.thread: threading.Thread | None = None

    def put(self, started: _Started) -> None:
        started.end_input()  # the runner ends at once; only the waiting is deferred
        with self.lock:
            self.pending.append((time.monotonic() + self.AFTER_S, started))
            self.lock.notify_all()
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="sandbox-reaper", daemon=True)
                self.thread.start()

    def _loop(self) -> None:
        while True:
            with self.lock:
                while not self.pending or self.pending[0][0] > time.monotonic():
                    self.lock.wait(self.pending[0][0] - time.monotonic() if self.pending else None)
                _, started = self.pending.pop(0)
                self.busy += 1
            try:
                started.stop()
            except Exception:  # noqa: BLE001 - one sandbox's end must not stop the others'
                log.exception("ending a sandbox")
            finally:
                with self.lock:
                    self.busy -= 1
                    self.lock.notify_all()

    def drain(self, timeout_s: float = SPARE_READY_S) -> None:
        """Wait until every batch closed so far has ended (its processes, cgroup and directories gone)."""
        deadline = time.monotonic() + timeout_s
        with self.lock:
            while self.pending or self.busy:
                if not self.lock.wait(max(0.0, deadline - time.monotonic())):
                    break

    def stop_all(self) -> None:
        """At exit: end what is still pending here (the thread may be gone with the interpreter)."""
        self.drain(5.0)
        with self.lock:
            left, self.pending = self.pending, []
        for _, started in left:
            started.stop()

    def forget(self) -> None:
        """In a forked child: the parent's ending sandboxes are not ours."""
        self.__init__()  # type: ignore[misc]


REAPER = Reaper()
os.register_at_fork(after_in_child=REAPER.forget)
atexit.register(REAPER.stop_all)


class BwrapBatch(Batch):
    # the runner reads the next command as soon as it has answered the last: it starts the
    # next test while we judge the last (and tears down the last test's namespaces meanwhile)
    queue_depth = 2

    def __init__(self, sandbox: BwrapSandbox, spec: BatchSpec) -> None:
        self.spec = spec
        SPARES.begin()
        try:
            self._start(sandbox, spec)
        except BaseException:
            SPARES.end()
            raise

    def _start(self, sandbox: BwrapSandbox, spec: BatchSpec) -> None:
        started = SPARES.take(spec)
        if started is not None:
            try:
                started.serve(spec)
            except BaseException:
                started.stop()
                raise
        else:
            started = _Started(sandbox, spec, spare=False)
        self.started = started
        self.unanswered = 0
        self.proc = started.proc
        assert self.proc.stdout is not None
        self.answers = AnswerStream(self.proc.stdout.fileno())
        self.wake_r, self.wake_w = os.pipe()
        self.answers.wake = self.wake_r
        self.abort_lock = threading.Lock()
        self.closed = False
        self.errors = started.errors
        self.accounting = started.accounting
        # a zygote batch's runner first says what the zygote's compile gave (runner_zygote.h)
        self.compile_unread = spec.zygote
        self.compiled: bool | None = None

    def _runner_error(self, what: str) -> SandboxUnavailable:
        self.errors.seek(0)
        detail = self.errors.read().decode("utf-8", "replace").strip()[-2000:]
        return SandboxUnavailable(f"{what}: {detail or 'no message'}")

    def run(self, index: int) -> RawResult:
        self.send(index)
        return self.receive()

    def send(self, index: int) -> None:
        assert self.proc.stdin is not None
        target = "-" if index < 0 else f"{IN_DIR}/{index}"
        if index >= 0:
            self.started.link_input(index)
        try:
            self.proc.stdin.write(f"R {target}\n".encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise self._runner_error("the sandbox runner exited") from None
        self.unanswered += 1

    def _read_compiled(self, deadline: float) -> None:
        if not self.compile_unread:
            return
        self.answers.deadline = deadline
        try:
            line = self.answers.readline()
        except TimeoutError:
            self.started.kill()
            raise SandboxUnavailable("the sandbox runner stopped answering") from None
        words = line.split()
        if len(words) != 2 or words[0] != b"Z":
            raise self._runner_error("the sandbox runner failed")
        self.compile_unread = False
        self.compiled = {b"compiled": True, b"raised": False}.get(words[1])

    def program_compiled(self) -> bool | None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.flush()  # a spare's "C" line, written with no test asked for yet
            self._read_compiled(time.monotonic() + self.spec.wall_us() / 1e6 + 90)
        except (OSError, SandboxUnavailable):
            return None  # the batch's own reads say what went wrong
        return self.compiled

    def receive(self) -> RawResult:
        assert self.unanswered > 0
        # (the zygote's start comes before the first answer: read within that answer's wait)
        self._read_compiled(time.monotonic() + self.unanswered * (self.spec.wall_us() / 1e6 + 30) + 60)
        # the runner enforces the wall clock itself; this only guards against a wedged runner
        # (the answer may wait for a test asked for before this one)
        self.answers.deadline = time.monotonic() + self.unanswered * (self.spec.wall_us() / 1e6 + 30)
        self.unanswered -= 1
        try:
            result = read_result(self.answers)  # type: ignore[arg-type]
        except TimeoutError:
            self.started.kill()
            raise SandboxUnavailable("the sandbox runner stopped answering") from None
        if result is None:
            raise self._runner_error("the sandbox runner failed")
        if self.started.cgroup is not None and result.cg_cpu_us < 0:
            # the test could not join its cgroup: its figures are rusage only
            if not rusage_allowed():
                raise self._runner_error(NO_CPU_ACCOUNTING)
            self.accounting = "rusage"
        return result

    def abort(self) -> None:
        with self.abort_lock:  # never after close(): the wake-up pipe's numbers may be reused
            if self.aborted or self.closed:
                return
            self.aborted = True
            os.write(self.wake_w, b"x")  # a wait for an answer ends now
        self.started.kill()  # and the tests in flight with every process of the sandbox

    def close(self) -> None:
        if self.unanswered and not self.aborted:
            # a test asked for ahead and no longer wanted (the batch stopped early): it
            # would run to its limits; the sandbox is discarded anyway
            self.started.kill()
        with self.abort_lock:
            self.closed = True
            for fd in (self.wake_r, self.wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.aborted or self.unanswered:
            # tests were in flight and were killed with the sandbox: the answer must not go out
            # while their processes (a fork bomb's thousands) are still on the host
            self.started.stop()
        else:
            # every test was answered, and the runner answers a test only once every process
            # it left is gone (hts-runner's test_leftovers): what is left is the runner's own
            # exit, the cgroup and the directories, ended off the caller's path
            REAPER.put(self.started)
        SPARES.want(self.spec)


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self) -> None:
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable(MISSING)
        self.bwrap = found
        self.runner_dir = cache.tool_view(cache.runner_dir())
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

    def keep_warm(self, count: int | None = None) -> int:
        if count is None:
            count = warm_count()
        spare_nice()  # a bad setting is refused here, not in the thread that starts spares
        SPARES.enable(self, count)
        return count

    def batches_compile_python(self) -> bool:
        return zygote_enabled()

    def settle_warm(self) -> None:
        REAPER.drain()
        SPARES.settle()


def warm_count() -> int:
    """HARDTESTS_SANDBOX_WARM: spares per kind of batch (default: the CPU count, which is
    the default number of judging lanes; 0: none)."""
    value = os.environ.get(WARM_ENV, "").strip()
    try:
        return max(0, int(value)) if value else os.cpu_count() or 1
    except ValueError:
        raise SandboxUnavailable(f"{WARM_ENV} must be a whole number, not {value!r}") from None


def spare_nice() -> int:
    """The nice value spares start at now (0 once bringing one back has failed)."""
    return 0 if _RENICE_FAILED.is_set() else _spare_nice_setting()


_RENICE_FAILED = threading.Event()


@functools.cache
def _spare_nice_setting() -> int:
    """HARDTESTS_SANDBOX_SPARE_NICE (default 19): the nice value a spare waits at, so that
    starting it (its runner's filter, a Python zygote's interpreter) yields to the batches
    running now and to their results on the way out; 0: spares run at normal priority.

    A batch that takes a spare first brings its processes back to nice 0 (the runner refuses
    the batch otherwise). Raising a priority needs CAP_SYS_NICE, or, for processes of our own
    uid, an RLIMIT_NICE of 20, which this process then raises and its children inherit.
    Where neither is possible, spares run at normal priority."""
    value = os.environ.get(SPARE_NICE_ENV, "").strip()
    try:
        nice = int(value) if value else 19
    except ValueError:
        nice = -1
    if not 0 <= nice <= 19:
        raise SandboxUnavailable(f"{SPARE_NICE_ENV} must be a whole number from 0 to 19, not {value!r}")
    if nice == 0 or not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/children"):
        return 0
    if _has_capability(CAP_SYS_NICE):
        return nice
    if cache.sandbox_uid() is not None:
        return 0  # the spares run as another uid, which only CAP_SYS_NICE may renice
    soft, hard = resource.getrlimit(resource.RLIMIT_NICE)
    if soft < NICE_ZERO_LIMIT:
        if hard != resource.RLIM_INFINITY and hard < NICE_ZERO_LIMIT:
            return 0
        resource.setrlimit(resource.RLIMIT_NICE, (NICE_ZERO_LIMIT, hard))
    return nice


def _has_capability(bit: int) -> bool:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> bit & 1)
    return False


def process_threads(root: int) -> Iterator[tuple[int, int]]:
    """(pid, tid) of every thread of `root` and of its descendants; OSError when one ends
    while we look."""
    pending = [root]
    while pending:
        pid = pending.pop()
        for tid in map(int, os.listdir(f"/proc/{pid}/task")):
            yield pid, tid
            with open(f"/proc/{pid}/task/{tid}/children") as children:
                pending += map(int, children.read().split())


def _normal_priority(root: int) -> None:
    """Every thread of `root` and of its descendants (a spare's bubblewrap, runner, launcher,
    zygote) at nice 0; OSError when one cannot be.

    bubblewrap and its init are single-threaded with one child each; the runner, its launcher
    and its zygote stay in the new session's process group (--new-session: led by the runner,
    or by the init that started it), so one setpriority of that group reaches every thread of
    them (a walk of every thread's /proc files took 0.2-1.5 ms of a batch's start). Any other
    shape gets the walk."""
    pid = parent = root
    for _ in range(2):
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            found = children.read().split()
        if len(os.listdir(f"/proc/{pid}/task")) != 1 or len(found) != 1:
            return _walk_to_normal_priority(root)
        os.setpriority(os.PRIO_PROCESS, pid, 0)
        parent, pid = pid, int(found[0])
    group = os.getpgid(pid)
    if group not in (pid, parent):
        return _walk_to_normal_priority(root)
    os.setpriority(os.PRIO_PGRP, group, 0)
    return None


def _walk_to_normal_priority(root: int) -> None:
    for _, tid in process_threads(root):
        if os.getpriority(os.PRIO_PROCESS, tid) > 0:
            os.setpriority(os.PRIO_PROCESS, tid, 0)
