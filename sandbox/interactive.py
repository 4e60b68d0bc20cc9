"""Interactive runs: a program and an interactor, two sandboxes joined through a relay on the host.

Each test gets four fresh FIFOs, two a side: the program's stdin and stdout, the
interactor's stdin and stdout. The host relays what each side writes to the other's stdin
and keeps a log of it (InteractionLog: direction-tagged, in the order relayed, the first
LOG_KEPT bytes kept and the rest counted), as DOMjudge's runpipe does with its -o option:
the sandboxes never see each other's pipes, and the host sees every byte without a tracer
or a process of its own in either sandbox. The program runs in a batch of its own under the
problem's limits, the interactor in another under its own limits, so neither's CPU time,
memory or processes count against the other. Each runner gets the command "P <path>": the
test's stdin is <path>, its stdout <path>.out (hts-runner; nothing is captured); the FIFOs
are hard-linked into what each batch's runner sees (its inputs directory under bubblewrap,
its private directory under Docker). Both sides start at once; the interactor's stdin
begins with `prelude` (what its shim needs of the test: input, answer; not logged), which the
relay writes first, so the program's first byte always comes after it.

The relay changes nothing either side can do or see:
- it reads a side's output only when what it read before has gone on, and each FIFO's
  buffer is cut to half a pipe's (RELAY_PIPE_BYTES): a writer meets a full pipe after about
  as many bytes as with a bare pipe pair (64 KiB), so a program that writes without reading
  blocks as it would;
- the host holds the FIFOs open (its readers of each side's stdout, and each side's stdin
  read-write) until a side has ended: then the survivor gets, once what was already on its
  way has been delivered, the end of its stdin (EOF), and EPIPE on writing, as with a bare
  pipe pair; a reader of each stdin that never reads keeps what the host wrote there for a
  side whose runner opens it late;
- it never blocks: its writes are non-blocking, what does not fit waits for the reader, and
  the loop ends when both sides' runners have answered (each enforces its own limits), so a
  side that stops reading stalls only its peer, up to that peer's own limits.
The interactor's own stdout and stderr are not captured: whatever it reports comes on its
stderr (the runner keeps its last 4 KB).
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

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

# the runner's view of a batch's inputs directory (bwrap.IN_DIR), where test 0 is the FIFO
INPUT_NAME = "0"
# how much of a test's interaction the log keeps (the rest is counted)
LOG_KEPT = 64 * 1024
# each FIFO's buffer (F_SETPIPE_SZ): two of them and the relay's chunk hold about what one bare
# pipe does (64 KiB), so a side that writes without reading blocks after as many bytes
RELAY_PIPE_BYTES = 32 * 1024
RELAY_CHUNK = 4096
PROGRAM_TO_INTERACTOR, INTERACTOR_TO_PROGRAM = ">", "<"


@dataclass
class InteractionLog:
    """What each side sent the other, in the order the relay passed it on: (direction, bytes)
    with direction ">" (program to interactor) or "<" (interactor to program), consecutive
    reads of one direction merged; the first LOG_KEPT bytes are kept, `total` counts all."""

    # the last entry grows in place (a program that flushes every line sends many small reads)
    entries: list[tuple[str, bytearray]] = dataclasses.field(default_factory=list)
    kept: int = 0
    total: int = 0
    sent: dict[str, int] = dataclasses.field(default_factory=lambda: {PROGRAM_TO_INTERACTOR: 0,
                                                                      INTERACTOR_TO_PROGRAM: 0})

    @property
    def cut(self) -> int:
        """Bytes sent but not kept."""
        return self.total - self.kept

    def add(self, direction: str, data: bytes) -> None:
        self.total += len(data)
        self.sent[direction] += len(data)
        piece = data[:max(0, LOG_KEPT - self.kept)]
        if not piece:
            return
        self.kept += len(piece)
        if self.entries and self.entries[-1][0] == direction:
            self.entries[-1][1].extend(piece)
        else:
            self.entries.append((direction, bytearray(piece)))

    def text(self, limit: int | None = None) -> str:
        """The log as lines "> ..." (program to interactor) and "< ..." (interactor to
        program), cut after whole lines at `limit` characters; a message that does not end a
        line is followed by "\\ (no newline)"; what is not shown (not kept, or past the
        limit) is named at the end: "[... N more bytes of TOTAL not shown]"."""
        out: list[str] = []
        size = shown = 0
        for direction, data in self.entries:
            parts = data.split(b"\n")
            ends_line = parts[-1] == b""
            if ends_line:
                parts.pop()
            for number, part in enumerate(parts):
                line = f"{direction} {part.decode('utf-8', 'replace')}\n"
                if not ends_line and number == len(parts) - 1:
                    line += "\\ (no newline)\n"
                if limit is not None and size + len(line) > limit:
                    # a first line longer than the limit is cut: its head, then the count of what is not shown
                    text = line[2:limit - size].rstrip("\n") if not out else ""
                    if text:
                        out.append(f"{direction} {text}\n")
                        shown += len(text.encode("utf-8", "replace"))
                    return "".join(out) + f"[... {self.total - shown} more bytes of {self.total} not shown]\n"
                out.append(line)
                size += len(line)
                shown += len(part) + (0 if not ends_line and number == len(parts) - 1 else 1)
        if self.cut:
            out.append(f"[... {self.cut} more bytes of {self.total} not shown]\n")
        return "".join(out)


@dataclass
class InteractiveRun:
    """One test: the program judged against its limits, the interactor's own run (its
    verdict OK or not, its stderr carrying what it reports), and which side ended first."""

    program: RunResult
    interactor: RunResult
    interactor_first: bool
    # the interactor ended or stalled before it had read its prelude: the program never ran
    prelude_unread: bool = False
    log: InteractionLog = dataclasses.field(default_factory=InteractionLog)


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
    """A batch's answers, read by a thread of its own, into a queue shared by both sides; each
    answer wakes the relay (a byte on its wake pipe)."""

    def __init__(self, receive: Callable[[], RawResult], side: str,
                 answers: queue.Queue[tuple[str, RawResult | BaseException]], wake: int) -> None:
        self.receive, self.side, self.answers = receive, side, answers
        # its own copy: the relay may close its end first, and the number could then be reused
        self.wake = os.dup(wake)

    def start(self) -> None:
        threading.Thread(target=self._take, name=f"interactive-{self.side}", daemon=True).start()

    def _take(self) -> None:
        try:
            self.answers.put((self.side, self.receive()))
        except BaseException as exc:  # the caller raises it
            self.answers.put((self.side, exc))
        with contextlib.suppress(OSError):  # the relay has gone (its test raised)
            os.write(self.wake, b"x")
        os.close(self.wake)


class _Direction:
    """One way through the relay: a side's stdout (`source`, the host reads) to the other's
    stdin (`target`, the host writes), with what was read and not yet written."""

    def __init__(self, tag: str, source: int, target: int) -> None:
        self.tag, self.source, self.target = tag, source, target
        self.pending = b""
        self.source_open = self.target_open = True
        # the source's side has ended: what it wrote is in the pipe already, read to its end
        self.ended = False


class _Relay:
    """The host between the two sides of one test (see the module's docstring): a poll loop on
    the thread that runs the test, never blocking on a side, logging what each sends."""

    def __init__(self, *, program_out: int, judge_out: int, program_in: int, judge_in: int,
                 keepers: list[int]) -> None:
        self.fds = [program_out, judge_out, program_in, judge_in, *keepers]
        self.judge_in_keeper = keepers[1]
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        for fd in self.fds:
            with contextlib.suppress(OSError):  # a smaller buffer only; the pipe works without it
                fcntl.fcntl(fd, F_SETPIPE_SZ, RELAY_PIPE_BYTES)
        self.log = InteractionLog()
        self.ways = {PROGRAM_TO_INTERACTOR: _Direction(PROGRAM_TO_INTERACTOR, program_out, judge_in),
                     INTERACTOR_TO_PROGRAM: _Direction(INTERACTOR_TO_PROGRAM, judge_out, program_in)}
        self.poller = select.poll()
        self.poller.register(self.wake_r, select.POLLIN)
        self.watched: dict[int, int] = {}
        self.watched_state: tuple[tuple[bool, bool, bool], ...] = ()
        # the interactor's prelude, first on its stdin (not logged: it is no side's message)
        self.prelude_left = 0
        self.after_prelude = 0
        self.prelude_unread = False
        self.any_ended = False

    def send_prelude(self, prelude: bytes) -> None:
        way = self.ways[PROGRAM_TO_INTERACTOR]
        way.pending, self.prelude_left = prelude, len(prelude)
        self._write(way)

    def _close(self, fd: int) -> None:
        if fd in self.fds:
            self.fds.remove(fd)
            if fd in self.watched:
                self.poller.unregister(fd)
                del self.watched[fd]
            os.close(fd)

    def _watch(self) -> None:
        state = tuple((bool(way.pending), way.source_open, way.target_open) for way in self.ways.values())
        if state == self.watched_state:
            return
        self.watched_state = state
        want: dict[int, int] = {}
        for way in self.ways.values():
            if way.pending and way.target_open:
                want[way.target] = select.POLLOUT
            elif way.source_open and not way.pending:
                want[way.source] = select.POLLIN
        for fd in [fd for fd in self.watched if fd not in want]:
            self.poller.unregister(fd)
            del self.watched[fd]
        for fd, mask in want.items():
            if self.watched.get(fd) != mask:
                self.poller.register(fd, mask) if fd not in self.watched else self.poller.modify(fd, mask)
                self.watched[fd] = mask

    def step(self) -> None:
        """Wait for something to relay (or an answer), and relay it."""
        self._watch()
        for fd, _ in self.poller.poll():
            if fd == self.wake_r:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_r, 64)
                continue
            for way in self.ways.values():
                if fd == way.source and way.source_open and not way.pending:
                    self._read(way)
                elif fd == way.target and way.pending:
                    self._write(way)
        if self.any_ended:
            for way in self.ways.values():
                self._drain(way)

    def _drain(self, way: _Direction) -> None:
        """An ended side's output, read without waiting as its peer takes it; its end once read."""
        while way.ended and way.source_open and not way.pending:
            if not self._read(way) and way.source_open:
                # no writer is left once its runner has answered: what is not there never comes
                way.source_open = False
                self._close(way.source)
                self._flushed(way)

    def _read(self, way: _Direction) -> bool:
        """Read what the source sent (False: nothing there now); at its end, end the target."""
        try:
            data = os.read(way.source, RELAY_CHUNK)
        except BlockingIOError:
            return False
        if not data:
            way.source_open = False
            self._close(way.source)
            self._flushed(way)
            return False
        self.log.add(way.tag, data)
        way.pending = data
        self._write(way)
        return True

    def _write(self, way: _Direction) -> None:
        try:
            written = os.write(way.target, way.pending)
        except BlockingIOError:
            return
        way.pending = way.pending[written:]
        if way.tag == PROGRAM_TO_INTERACTOR:
            of_prelude = min(written, self.prelude_left)
            self.prelude_left -= of_prelude
            self.after_prelude += written - of_prelude
        if not way.pending:
            self._flushed(way)

    def _flushed(self, way: _Direction) -> None:
        # everything the source sent has gone on: its end is the target's end (EOF), once its
        # side's result is in (as the host's hold on a bare pipe pair was: the survivor never
        # ends before the side that ended first has been heard of)
        if way.ended and not way.source_open and not way.pending and way.target_open:
            way.target_open = False
            self._close(way.target)

    def ended(self, side: str) -> None:
        """`side`'s runner has answered: nothing reads its stdin any more (what was on its way
        is dropped, and its peer's next write meets EPIPE), and what it wrote is all there is
        (read to the end, to be delivered as its peer reads it)."""
        into, out_of = ((self.ways[INTERACTOR_TO_PROGRAM], self.ways[PROGRAM_TO_INTERACTOR]) if side == "program"
                        else (self.ways[PROGRAM_TO_INTERACTOR], self.ways[INTERACTOR_TO_PROGRAM]))
        if side == "interactor":
            # the pipe gives back its bytes in order: more left unread than the program's part
            # means some of the prelude was never read
            self.prelude_unread = self.prelude_left > 0 or _unread(self.judge_in_keeper) > self.after_prelude
        into.pending = b""
        for fd in (into.source, into.target):
            self._close(fd)
        into.source_open = into.target_open = False
        out_of.ended = self.any_ended = True
        self._drain(out_of)
        self._flushed(out_of)

    def close(self) -> None:
        for fd in list(self.fds):
            self._close(fd)
        for fd in (self.wake_r, self.wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.wake_r = self.wake_w = -1


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
        """One test: the interactor reads `prelude`, then talks with the program through the relay."""
        fifos = {name: self.root / name for name in ("program_in", "program_out", "judge_in", "judge_out")}
        for path in fifos.values():
            _fifo(path)
        for folder, stdin, stdout in ((self.prog_dir, fifos["program_in"], fifos["program_out"]),
                                      (self.judge_dir, fifos["judge_in"], fifos["judge_out"])):
            for name, target in ((INPUT_NAME, stdin), (f"{INPUT_NAME}.out", stdout)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(folder / name)
                os.link(target, folder / name)
        # the host's ends, open before either runner opens its own: a reader of each side's
        # stdout (non-blocking: it reports the end only once a writer has come and gone), and
        # each side's stdin read-write (a runner opening it never blocks, and its reader sees
        # EOF only when the host closes it)
        relay = _Relay(
            program_out=os.open(fifos["program_out"], os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC),
            judge_out=os.open(fifos["judge_out"], os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC),
            program_in=os.open(fifos["program_in"], os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC),
            judge_in=os.open(fifos["judge_in"], os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC),
            # readers that never read, held to the test's end: a pipe's bytes live as long as
            # one of its ends is open, so what the host wrote (and the EOF after it) still
            # reaches a side whose runner opens its stdin only after the host has let go
            keepers=[os.open(fifos[name], os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                     for name in ("program_in", "judge_in")],
        )
        relay.send_prelude(prelude)
        answers: queue.Queue[tuple[str, RawResult | BaseException]] = queue.Queue()
        got: dict[str, RawResult] = {}
        first = ""
        try:
            # both sides start at once: the relay passes the program's first byte on only after
            # the prelude, so neither waits for the other's start
            _Receiver(_send_piped(self.interactor, self.judge_dir), "interactor", answers, relay.wake_w).start()
            _Receiver(_send_piped(self.program, self.prog_dir), "program", answers, relay.wake_w).start()
            while len(got) < 2:
                relay.step()
                while not answers.empty():
                    side, answer = answers.get()
                    if isinstance(answer, BaseException):
                        raise answer
                    got[side] = answer
                    first = first or side
                    relay.ended(side)
        finally:
            relay.close()
        program = judge(got["program"], self.limits, self.program_language)
        interactor = judge(got["interactor"], self.interactor_limits, self.interactor_language)
        program.stdout = interactor.stdout = b""
        if relay.prelude_unread:
            # the interactor ended before it had read what the test is: a judging failure,
            # whatever the program did meanwhile
            if interactor.verdict == Verdict.OK:
                interactor.verdict = Verdict.RE
            interactor.stderr = f"the interactor did not read its input\n{interactor.stderr}"
            return InteractiveRun(program=RunResult(verdict=Verdict.SE, stderr="the interactor did not read the test"),
                                  interactor=interactor, interactor_first=True, prelude_unread=True, log=relay.log)
        return InteractiveRun(program=program, interactor=interactor, interactor_first=first == "interactor",
                              log=relay.log)

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
