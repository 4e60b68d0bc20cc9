"""Interactive runs: a program and an interactor, two sandboxes joined by two FIFOs.

Each test gets two fresh FIFOs: `to_program` (the interactor's stdout, the program's stdin)
and `to_interactor` (the program's stdout, the interactor's stdin). The program runs in a
batch of its own under the problem's limits, the interactor in another under its own
limits, so neither's CPU time, memory or processes count against the other. Each runner
gets the command "P <path>": the test's stdin is <path>, its stdout <path>.out (hts-runner;
nothing is captured); the FIFOs are hard-linked into what each batch's runner sees (its
inputs directory under bubblewrap, its private directory under Docker). The interactor's
stdin begins with `prelude` (what its shim needs of the test: input, answer), written by the
host before the program starts, so the program's first byte always comes after it.

The host holds both FIFOs open (O_RDWR) until the interactor has read its prelude (so its
runner has opened both), and the runners open them without blocking.
The host lets go of them as soon as one side has ended: from then on the survivor sees the
end of its stdin (EOF) or of its stdout (EPIPE) exactly as with a bare pipe pair. The
interactor's own stdout and stderr are not captured: whatever it reports comes on its stderr
(the runner keeps its last 4 KB).
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import fcntl
import os
import queue
import select
import shutil
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import cache, languages
from .base import Batch, BatchSpec, RawResult, Sandbox, judge, zygote_enabled
from .types import CompiledProgram, Limits, RunResult, SandboxUnavailable, Verdict

# the runner's view of a batch's inputs directory (bwrap.IN_DIR), where test 0 is the FIFO
INPUT_NAME = "0"


@dataclass
class InteractiveRun:
    """One test: the program judged against its limits, the interactor's own run (its
    verdict OK or not, its stderr carrying what it reports), and which side ended first."""

    program: RunResult
    interactor: RunResult
    interactor_first: bool
    # the interactor ended or stalled before it had read its prelude: the program never ran
    prelude_unread: bool = False


def _send_piped(batch: Batch, folder: Path) -> Callable[[], RawResult]:
    """Ask `batch` for a piped test (hts-runner's "P" command) whose FIFOs are in `folder`; the
    function that reads its answer."""
    from .bwrap import IN_DIR, BwrapBatch

    if isinstance(batch, BwrapBatch):
        started = batch.started
        if started.lazy_inputs is not None and started.in_dir is not None:
            # a spare serving this batch binds a directory of its own: the test's FIFOs go there too
            _link_fifos(folder, started.in_dir, INPUT_NAME)
        assert batch.proc.stdin is not None
        try:
            batch.proc.stdin.write(f"P {IN_DIR}/{INPUT_NAME}\n".encode())
            batch.proc.stdin.flush()
        except BrokenPipeError:
            raise batch._runner_error("the sandbox runner exited") from None
        batch.unanswered += 1
        return batch.receive
    from .docker_backend import PRIV_DIR, DockerBatch

    if isinstance(batch, DockerBatch):
        # the container sees its private directory only: the FIFOs are linked in as its current input
        _link_fifos(folder, batch.private / "in", "cur")
        assert batch.stream is not None
        try:
            batch.stream.send(f"P {PRIV_DIR}/in/cur\n".encode())
        except OSError:
            raise batch._runner_error("the sandbox runner in the container exited") from None
        return lambda: _docker_answer(batch)
    raise SandboxUnavailable(f"interactive judging does not run on the {type(batch).__name__} backend")


def _link_fifos(folder: Path, target: Path, name: str) -> None:
    for suffix in ("", ".out"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target / f"{name}{suffix}")
        os.link(folder / f"{INPUT_NAME}{suffix}", target / f"{name}{suffix}")


def _docker_answer(batch: Any) -> RawResult:
    """A Docker batch's answer to a piped test (as DockerBatch.run reads one)."""
    from .bwrap import read_result

    batch.stream.deadline = time.monotonic() + batch.spec.wall_us() / 1e6 + 30
    try:
        result = read_result(batch.stream)
    except TimeoutError:
        raise SandboxUnavailable("the sandbox runner in the container stopped answering") from None
    except (OSError, ValueError):
        result = None
    if result is None:
        raise batch._runner_error("the sandbox runner in the container failed")
    if os.WIFEXITED(result.status) and os.WEXITSTATUS(result.status) == 2 \
            and result.stderr.startswith((b"hts-dock: ", b"hts-runner: ")):
        raise SandboxUnavailable(result.stderr.decode("utf-8", "replace").strip())
    return result


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe of `fd`."""
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf, True)
    return buf[0]


def _fifo(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    os.mkfifo(path)
    # the sandbox may run as another user (nobody): both ends are opened from there
    os.chmod(path, 0o666)


def _sessions_dir() -> Path:
    path = cache.neutral_root() / f"interactive-{os.getpid()}"
    path.mkdir(mode=0o755, exist_ok=True)
    return path


class _Receiver:
    """A batch's answers, read by a thread of its own, into a queue shared by both sides."""

    def __init__(self, receive: Callable[[], RawResult], side: str,
                 answers: queue.Queue[tuple[str, RawResult | BaseException]]) -> None:
        self.receive, self.side, self.answers = receive, side, answers

    def start(self) -> None:
        threading.Thread(target=self._take, name=f"interactive-{self.side}", daemon=True).start()

    def _take(self) -> None:
        try:
            self.answers.put((self.side, self.receive()))
        except BaseException as exc:  # the caller raises it
            self.answers.put((self.side, exc))


class InteractiveSession:
    """A program and an interactor, ready to run tests one after another (two batches open)."""

    def __init__(self, sb: Sandbox, program: CompiledProgram, interactor: CompiledProgram, limits: Limits,
                 interactor_limits: Limits) -> None:
        self.limits, self.interactor_limits = limits, interactor_limits
        self.program_language, self.interactor_language = program.language, interactor.language
        self.sb, self.interactor_prog = sb, interactor
        # on the cache's filesystem, where a Docker batch's private directory is (the FIFOs are
        # hard-linked there), under one parent per process: a batch's inputs directory's parent
        # is part of the shape a spare sandbox serves (bwrap), so a later session of the same
        # program takes the spares its earlier batches asked for
        parent = _sessions_dir()
        self.batches: list[Batch] = []
        self.dirs: list[Path] = []
        try:
            self.root, self.prog_dir, self.judge_dir = (cache.make_private_dir(parent) for _ in range(3))
            self.dirs = [self.root, self.prog_dir, self.judge_dir]
            # each side's wall-clock backstop leaves room for the other's work: a program waiting
            # while the interactor computes is not idle, nor is the interactor waiting for the
            # program (CPU time, each side's own, is what the verdicts read)
            self.program_wall = dataclasses.replace(
                limits, wall_s=limits.wall_limit_s + interactor_limits.time_s)
            self.interactor_wall = dataclasses.replace(
                interactor_limits, wall_s=interactor_limits.wall_limit_s + limits.wall_limit_s)
            self.program = self._open(sb, program, self.program_wall, self.prog_dir)
            self.interactor = self._open(sb, interactor, self.interactor_wall, self.judge_dir)
        except BaseException:
            self.close()
            raise

    def _open(self, sb: Sandbox, prog: CompiledProgram, limits: Limits, folder: Path) -> Batch:
        argv = languages.run_argv(prog.language, main_class=prog.main_class, memory_mb=limits.memory_mb)
        spec = BatchSpec(argv=argv, language=prog.language, limits=limits, inputs_dir=folder,
                         prog_dir=Path(prog.path), zygote=prog.language == "python3" and zygote_enabled())
        batch = sb.open_batch(spec)
        self.batches.append(batch)
        return batch

    def run(self, prelude: bytes) -> InteractiveRun:
        """One test: the interactor reads `prelude`, then talks with the program."""
        to_program, to_interactor = self.root / "to_program", self.root / "to_interactor"
        _fifo(to_program)
        _fifo(to_interactor)
        for folder, stdin, stdout in ((self.prog_dir, to_program, to_interactor),
                                      (self.judge_dir, to_interactor, to_program)):
            for name, target in ((INPUT_NAME, stdin), (f"{INPUT_NAME}.out", stdout)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(folder / name)
                os.link(target, folder / name)
        anchors = [os.open(to_program, os.O_RDWR | os.O_CLOEXEC), os.open(to_interactor, os.O_RDWR | os.O_CLOEXEC)]
        answers: queue.Queue[tuple[str, RawResult | BaseException]] = queue.Queue()
        got: dict[str, RawResult] = {}
        first = ""
        try:
            _Receiver(_send_piped(self.interactor, self.judge_dir), "interactor", answers).start()
            unread = not self._write_prelude(to_interactor, prelude, answers)
            if unread:
                # the interactor ended (or stalled) before reading what the test is: the
                # program never starts; the interactor's end is a judging failure
                for fd in anchors:
                    os.close(fd)
                anchors = []
                if answers.empty():
                    self.interactor.abort()
                _, answer = answers.get()
                if isinstance(answer, BaseException):
                    if not self.interactor.aborted:
                        raise answer
                    result = RunResult(verdict=Verdict.TLE, stderr="the interactor did not read its input")
                else:
                    result = judge(answer, self.interactor_limits, self.interactor_language)
                    if result.verdict == Verdict.OK:
                        result.verdict = Verdict.RE
                if self.interactor.aborted:
                    # its sandbox was killed: the next test gets a fresh one
                    self.batches.remove(self.interactor)
                    self.interactor.close()
                    self.interactor = self._open(self.sb, self.interactor_prog, self.interactor_wall,
                                                 self.judge_dir)
                return InteractiveRun(program=RunResult(verdict=Verdict.SE, stderr="the program did not run"),
                                      interactor=result, interactor_first=True, prelude_unread=True)
            _Receiver(_send_piped(self.program, self.prog_dir), "program", answers).start()
            while len(got) < 2:
                side, answer = answers.get()
                if isinstance(answer, BaseException):
                    raise answer
                got[side] = answer
                first = first or side
                # one side has ended: the other now sees EOF or EPIPE as with a bare pipe pair
                for fd in anchors:
                    os.close(fd)
                anchors = []
        finally:
            for fd in anchors:
                os.close(fd)
        program = judge(got["program"], self.limits, self.program_language)
        interactor = judge(got["interactor"], self.interactor_limits, self.interactor_language)
        program.stdout = interactor.stdout = b""
        return InteractiveRun(program=program, interactor=interactor, interactor_first=first == "interactor")

    def _write_prelude(self, path: Path, prelude: bytes,
                       answers: queue.Queue[tuple[str, RawResult | BaseException]]) -> bool:
        """Write the prelude into the interactor's stdin; False if it ended or stalled first."""
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        deadline = time.monotonic() + self.interactor_wall.wall_limit_s + 30
        try:
            view = memoryview(prelude)
            while view:
                if not answers.empty() or time.monotonic() > deadline:
                    return False
                _, writable, _ = select.select([], [fd], [], 0.05)
                if writable:
                    try:
                        written = os.write(fd, view[:65536])
                    except BlockingIOError:
                        continue
                    view = view[written:]
            # the prelude written is not yet the prelude read: until the interactor has read it
            # (so its runner has opened both of its FIFOs), the host must hold them open
            while _unread(fd):
                if not answers.empty() or time.monotonic() > deadline:
                    return False
                time.sleep(0.0005)
            return True
        finally:
            os.close(fd)

    def close(self) -> None:
        for batch in self.batches:
            with contextlib.suppress(Exception):
                batch.close()
        self.batches = []
        for folder in self.dirs:
            shutil.rmtree(folder, ignore_errors=True)


def run_interactive(sb: Sandbox, program: CompiledProgram, interactor: CompiledProgram, preludes: list[bytes],
                    limits: Limits, interactor_limits: Limits) -> list[InteractiveRun]:
    """Run `program` against `interactor` once per prelude (one test each), in order."""
    if not program.ok:
        return [InteractiveRun(program=RunResult(verdict=program.verdict, stderr=program.message),
                               interactor=RunResult(verdict=Verdict.OK), interactor_first=False)
                for _ in preludes]
    if not preludes:
        return []
    if not interactor.ok:
        raise SandboxUnavailable(f"the interactor is not compiled ({interactor.verdict}): {interactor.message[-500:]}")
    session = InteractiveSession(sb, program, interactor, limits, interactor_limits)
    try:
        return [session.run(prelude) for prelude in preludes]
    finally:
        session.close()
