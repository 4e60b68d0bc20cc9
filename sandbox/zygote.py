"""hts-zygote: a started Python interpreter that forks each test of a batch (bare Python
spends most of a short test starting the interpreter).

hts-runner (-Z) starts this file inside the batch's sandbox, in place of the program, with
the environment the program would get, and talks to it over a SEQPACKET socket (fd 3).
For each test the runner creates the test's init as it always does (pid 1 of new PID,
mount, IPC and UTS namespaces, with a fresh /tmp, /dev/shm and /proc and the runner's
directories hidden) and sends us the test's stdin, stdout, stderr and report descriptors
and a pidfd of that init.  We fork the program process into the init's PID namespace; it
enters the init's other namespaces and the test cgroup (on cgroup v1 we joined it once, at
the start, and the program is born in it), sets the limits of hts-runner's
exec path, drops every capability, installs the batch's seccomp filter (fd 4, built by
the runner with libseccomp) and only then runs the program's code as `__main__`.  We reap
it and write its report (wait status, CPU time, peak RSS) as the runner's own init would.
So a test gets the isolation of a test started with execve: only the interpreter's start
is shared.

Once it has the program, the zygote compiles it as `python3 -I main.py` does, and its "ready"
says what that gave (COMPILED, RAISED or UNSURE); the runner passes it on to the host before
the batch's first answer ("Z compiled"), which takes it for Python's syntax check: the same
compile, so a new program's check costs no sandbox of its own (problems/judging.py).

The zygote runs only this file and never enters a test's namespaces: no program can see
it (it is outside the program's PID namespace), and the program runs without
capabilities, under the filter, in a forked copy.  Nothing a test does to its copy of
the interpreter reaches the next test, which is forked from the untouched zygote again.

What a program can tell apart from a fresh `python3 -I main.py`: modules this file
imported are already in sys.modules, /proc/self/cmdline is the zygote's, its parent pid
below os.getppid (libc, /proc/self/stat) is 0 (the zygote, outside its PID namespace;
os.getppid answers 1, the init, as in an exec'd test), the string hash
seed is the batch's (one per batch, not one per test), and the interpreter's pages shared
with the zygote are not charged to the test's memory cgroup (about 8 MB less than a
fresh interpreter).  A spare sandbox starts its zygote before its batch is known, with
RLIMIT_STACK at 1 GiB at exec: the gap left below the libraries for the stack is that
(an exec'd program's is its own limit), while the program's RLIMIT_STACK is its batch's,
and the default stack of a thread it starts is 1 GiB of address space (cgroups count
memory, not address space).  The recursion limit counts as in a fresh interpreter (the levels
this file adds are discounted), and shutdown does what the interpreter's does that a
program can observe (threads joined, atexit run, output flushed, the exit status).
"""

# the C modules under socket and signal: their Python wrappers import enum, selectors and
# collections, a third of the zygote's start-up, for nothing used here
import _signal
import _socket
import atexit
import ctypes
import gc
import io
import os
import resource
import struct
import sys

# typing is not imported at run time (about as costly as the socket wrappers above): mypy reads
# any TYPE_CHECKING as true, and the names it brings in are only named in quoted annotations
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, FrameType, ModuleType, TracebackType
    from typing import Any

CLONE_NEWPID, PR_SET_DUMPABLE = 0x20000000, 4
REPORT = struct.Struct("iiqq")  # hts-runner's struct report: status, cg_err, cpu_us, maxrss_kb
# recursion levels under the program's module frame that a fresh interpreter does not have:
# this file's module frame and the exec() call
OWN_FRAMES = 2

libc = ctypes.CDLL(None, use_errno=True)


def _recv_fds(sock: _socket.socket, maxfds: int) -> tuple[bytes, list[int]]:
    """One message and the descriptors it carries (socket.recv_fds, on the C module)."""
    size = struct.calcsize("i") * maxfds
    msg, ancdata, _flags, _addr = sock.recvmsg(16, _socket.CMSG_LEN(size))
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(data) // 4}i", data[: len(data) - len(data) % 4])
    return msg, fds


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


class Zygote:
    def __init__(self, argv: list[str]) -> None:
        (sock_fd, filter_fd, cg_fds, workdir, cpu_us, as_bytes, fsize, nproc, nofile, stack, join, sep,
         *self.prog_argv) = argv
        assert sep == "--" and self.prog_argv, "usage: zygote.py <options> -- main.py [args]"
        self.sock = _socket.socket(fileno=int(sock_fd))
        with os.fdopen(int(filter_fd), "rb") as handle:
            bpf = handle.read()
        procs = [int(fd) for fd in cg_fds.split(",") if fd]
        # the runner's own code sets up each program process (hts-zygote.so is runner.c)
        self.lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "hts-zygote.so"), use_errno=True)
        self.cg_err: int | None = None
        # what no program changes, made before a spare waits for its program: the program's
        # start (its streams, sys.argv, a fresh __main__), the recursion levels (below), and
        # the compiler's own first-use set-up (CPython makes its AST types at its first
        # compile: 0.7 ms, which a fresh interpreter has done too by the time it runs
        # main.py), so that they are not on a new program's first test's path
        self.main = _program_view(self.prog_argv)
        self.levels_left = _recursion_levels_left()
        compile("", "<zygote>", "exec", dont_inherit=True)
        if workdir == "-":
            # started in a spare sandbox before its batch was known: the batch's options come
            # in a "C" message, and only then is the program there to read.  The cgroup is the
            # spare's own from the start: joining it now ("once") keeps the move's wait for the
            # kernel's cgroup lock (5-15 ms after a quiet spell) off the batch's first test
            if join == "once" and procs:
                self.cg_err = self.lib.hts_zygote_join_early((ctypes.c_int * 3)(*procs), len(procs))
            self.sock.send(b"ready")
            try:
                message = self.sock.recv(1024)
            except ConnectionError:
                message = b""
            if not message.startswith(b"C "):
                os._exit(0)  # the spare was stopped unused
            workdir, cpu_us, as_bytes, fsize, nproc, nofile, stack, join = message[2:].decode().split(" ")
        ll, c_long = ctypes.c_longlong, ctypes.c_long
        rc = self.lib.hts_zygote_configure(
            ll(int(cpu_us)), ll(int(as_bytes)), ll(int(fsize)), c_long(int(nproc)), c_long(int(nofile)),
            ll(int(stack)), workdir.encode(), bpf, len(bpf), (ctypes.c_int * 3)(*procs), len(procs))
        if rc != 0:
            raise OSError("hts_zygote_configure failed")
        # "once" (cgroup v1): we join the test cgroup now (a spare's zygote has, above) and
        # every program is born in it; a move per test would take the kernel's global cgroup
        # lock (every fork and exit of the machine waits), and its first one an RCU grace
        # period.  Our few pages touched from now on are charged to it, and our fork of each
        # program counts in its CPU time.
        if self.cg_err is None and join == "once" and procs:
            self.cg_err = self.lib.hts_zygote_join()
        path = self.prog_argv[0]
        # not the program's doing when it fails (a file the batch did not link): the batch's SE
        with open(path, "rb") as handle:
            source = handle.read()
        before = _compile_cost()
        self.program = _compile_program(source, path)
        self.compiled = _compile_outcome(self.program, before)
        # the program's standard streams as it finds them (it may replace sys.stdout)
        self.streams = (sys.stdout, sys.stderr)
        # This file's module frame and exec() sit under the program's (and a fresh
        # interpreter's program sits under none): each program process takes those levels
        # off the interpreter's count of the levels used, so it recurses exactly as deep, and
        # sys.getrecursionlimit and setrecursionlimit are the interpreter's own, edges and
        # all (tracebacks leave this file's frames out, in _exit_status): self.levels_left.
        if self.levels_left is None:
            _discount_by_wrappers()

    def serve(self) -> "tuple[CodeType | BaseException, dict[str, Any]]":
        """Fork each test's program into its init's namespaces; return only in a program."""
        # the interpreter's own objects leave the collector's sight: a test's collections then
        # scan only its program's objects instead of copying every page of the zygote
        gc.freeze()
        # not dumpable (no program may write into a process of ours through /proc, same uid);
        # the program process sets it back, as execve would
        _check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
        # with what compiling the program gave (runner_zygote.h passes it on to the host)
        self.sock.send(b"ready" + self.compiled)
        while True:
            try:
                msg, fds = _recv_fds(self.sock, 5)
            except ConnectionError:
                msg, fds = b"", []
            if msg != b"T" or len(fds) != 5:
                os._exit(0)  # the runner is done (or gone)
            in_fd, out_fd, err_fd, rep_fd, init_fd = fds
            # our children are born in the init's PID namespace (we stay in ours)
            _check(libc.setns(init_fd, CLONE_NEWPID), "setns")
            joined_r, joined_w = os.pipe() if self.cg_err is None else (-1, -1)
            pid = os.fork()
            if pid == 0:
                return self._program(in_fd, out_fd, err_fd, init_fd, joined_w)
            for fd in (in_fd, out_fd, err_fd, init_fd):
                os.close(fd)
            if self.cg_err is None:
                os.close(joined_w)
                joined = os.read(joined_r, 4)
                os.close(joined_r)
                cg_err = struct.unpack("i", joined)[0] if len(joined) == 4 else 5  # EIO: it died first
            else:
                cg_err = self.cg_err
            _pid, status, usage = os.wait4(pid, 0)
            cpu_us = round((usage.ru_utime + usage.ru_stime) * 1e6)
            try:
                os.write(rep_fd, REPORT.pack(status, cg_err, cpu_us, usage.ru_maxrss))
            except OSError:
                pass  # the runner gave up on this test
            os.close(rep_fd)

    def _program(self, in_fd: int, out_fd: int, err_fd: int, init_fd: int,
                 joined_fd: int) -> "tuple[CodeType | BaseException, dict[str, Any]]":
        """The test's program process, forked into the init's PID namespace: hts-runner's own
        code takes it into the init's other namespaces and the test cgroup and sets its
        streams, session, limits, capabilities and filter (exec_program's setup); the rest of
        what the program sees was made ready before the fork (_program_view)."""
        self.sock.detach()  # closed with every other descriptor by the setup
        self.lib.hts_zygote_program(init_fd, joined_fd, in_fd, out_fd, err_fd)
        if self.levels_left is not None:
            self.levels_left.value += OWN_FRAMES
        return self.program, self.main.__dict__


def _compile_program(source: bytes, path: str) -> "CodeType | BaseException":
    """The program's code, compiled as `python3 -I main.py` compiles it, or whatever compiling
    it raised (any exception: a RecursionError of a deeply nested expression, a SyntaxError, a
    MemoryError...), which each test raises as the program's own error, as a fresh interpreter
    does: nothing in a program's text stops the zygote.

    The compiler's depth limit is the recursion limit less the depth it is called at (each
    level counts three AST levels): a fresh interpreter compiles at depth 0, this call is some
    levels deep, which are added to the limit for the call.  The syntax check of
    languages.compile_step does the same, so a program the check passes compiles here too."""
    try:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _depth_of_a_call_here(sys._getframe()))
        try:
            return compile(source, path, "exec", dont_inherit=True)
        finally:
            sys.setrecursionlimit(limit)
    except BaseException as exc:  # noqa: BLE001 - every one is the program's, raised in each test
        return exc.with_traceback(None)


# What compiling the program told the host (languages.compile_step's syntax check, answered
# here): "+" it compiled, "-" compiling raised, "?" it compiled but took more than the check
# might have been given (its CPU time or memory past these bounds, far under the check's own
# limits, base.COMPILE_LIMITS): the host then runs the check in a sandbox of its own.
COMPILED, RAISED, UNSURE = b"+", b"-", b"?"
COMPILE_CPU_BOUND_S = 2.0
COMPILE_RSS_BOUND_KB = 512 * 1024


def _compile_cost() -> tuple[float, int]:
    """This process's CPU seconds and peak RSS (KB) so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def _compile_outcome(program: "CodeType | BaseException", before: tuple[float, int]) -> bytes:
    """What the syntax check would say of the program, from this compile: the same compile
    (python3 -I's, at depth 0), so a program that compiled here passes it, and one whose
    compile raised is refused by it, unless the check's limits could tell them apart (a
    compile that needed much time or memory: UNSURE)."""
    if isinstance(program, BaseException):
        return RAISED
    cpu_s, rss_kb = _compile_cost()
    if cpu_s - before[0] > COMPILE_CPU_BOUND_S or rss_kb > COMPILE_RSS_BOUND_KB:
        return UNSURE
    return COMPILED


def _depth_of_a_call_here(frame: "FrameType") -> int:
    """The recursion depth a builtin called from `frame` runs at (the depth the compiler
    starts from).  The interpreter says it when refused a limit at or under it; else (another
    message) the Python frames up to `frame` and the call's own level."""
    try:
        sys.setrecursionlimit(1)
    except RecursionError as exc:
        words = str(exc).split(" at the recursion depth ")
        if len(words) == 2 and words[1].split(":")[0].isdigit():
            # this function's frame is one level deeper than `frame`
            return int(words[1].split(":")[0]) - 1
    depth = 1
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    return depth - 1


def _program_view(prog_argv: list[str]) -> "ModuleType":
    """What a program finds at its start, made once here and copied into each program
    process by the fork: its standard streams (made as the interpreter makes them, on
    descriptors of the kinds the test's will be: a file for stdin, pipes for stdout and
    stderr, whose seekability the streams remember), sys.argv, and a fresh `__main__`."""
    # typeshed's sys.stdin is a TextIO, without write_through; the interpreter made all three
    # io.TextIOWrapper, whose settings are copied here
    started: tuple[io.TextIOWrapper, ...] = (sys.stdin, sys.stdout, sys.stderr)  # type: ignore[assignment]
    settings = [(stream.encoding, stream.errors, stream.line_buffering, stream.write_through)
                for stream in started]
    saved = [os.dup(1), os.dup(2)]
    pipe_r, pipe_w = os.pipe()
    os.dup2(pipe_w, 1)
    os.dup2(pipe_w, 2)
    streams: list[io.TextIOWrapper] = []
    try:
        for fd, (encoding, errors, line_buffering, write_through) in enumerate(settings):
            mode = "rb" if fd == 0 else "wb"
            stream = io.TextIOWrapper(open(fd, mode, -1, closefd=False), encoding=encoding, errors=errors,
                                      newline="\n", line_buffering=line_buffering, write_through=write_through)
            # read-only in typeshed's IO; open() sets it on the TextIOWrapper it returns just so
            stream.mode = mode[0]  # type: ignore[misc]
            streams.append(stream)
    finally:
        for fd, original in zip((1, 2), saved, strict=True):
            os.dup2(original, fd)
        for fd in (*saved, pipe_r, pipe_w):
            os.close(fd)
    # Final in typeshed; in a fresh interpreter they are the program's own streams, as here
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]
    sys.argv = list(prog_argv)
    sys.orig_argv = [sys.executable, "-I", *prog_argv]
    main = type(sys)("__main__")
    main.__dict__.update(__file__=prog_argv[0], __builtins__=__builtins__, __cached__=None)
    # the interpreter's own importlib, loaded at start-up (importlib.machinery re-exports it)
    main.__loader__ = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", prog_argv[0])
    sys.modules["__main__"] = main
    _parent_is_the_init()
    return main


def _parent_is_the_init() -> None:
    """A program's parent is the zygote, outside the program's PID namespace, where the
    kernel answers getppid() with 0; in an exec'd test it is the namespace's init, pid 1
    (which ignores the program's signals, as the zygote's init does). os.getppid says 1."""
    real = os.getppid

    def getppid() -> int:
        return real() or 1

    os.getppid = getppid


def _recursion_levels_left() -> "ctypes.c_int | None":
    """The interpreter's count of the recursion levels this thread has left
    (PyThreadState.recursion_remaining; py_recursion_remaining from 3.12), or None where it
    is not found.  It is the int just before the thread's copy of the recursion limit, and
    both move with sys.setrecursionlimit, which is how it is told from any other int."""
    get_tstate = ctypes.pythonapi.PyThreadState_Get
    get_tstate.restype = ctypes.c_void_p
    base = get_tstate()
    limit = sys.getrecursionlimit()
    fields = (ctypes.c_int * 24).from_address(base)
    try:
        for i in range(6, 23):  # after the three pointers every thread state starts with
            left = fields[i]
            if fields[i + 1] != limit or not 0 < left <= limit:
                continue
            sys.setrecursionlimit(limit + 7)
            moved = fields[i + 1] == limit + 7 and fields[i] == left + 7
            sys.setrecursionlimit(limit)
            if moved and fields[i + 1] == limit and fields[i] == left:
                return ctypes.c_int.from_address(base + i * ctypes.sizeof(ctypes.c_int))
    finally:
        sys.setrecursionlimit(limit)
    return None


def _discount_by_wrappers() -> None:
    """Where the interpreter's count is not found (another version's thread state): the
    limit is raised by this file's levels, and sys's two functions are wrapped to hide it
    (a program then sees functions where it would see builtins, and the edges of
    setrecursionlimit differ: a limit within two levels of the current depth, or past
    INT_MAX - 2)."""
    get, set_ = sys.getrecursionlimit, sys.setrecursionlimit
    set_(get() + OWN_FRAMES)

    def getrecursionlimit() -> int:
        return get() - OWN_FRAMES

    def setrecursionlimit(limit: int) -> None:
        set_(limit + OWN_FRAMES)

    sys.getrecursionlimit, sys.setrecursionlimit = getrecursionlimit, setrecursionlimit


def _exit_status(exc: BaseException) -> int:
    """What a fresh interpreter exits with after `exc` ends its main module, once it has
    printed what it prints (the message of a SystemExit, else the traceback through
    sys.excepthook), as the interpreter's C code does it: nothing the program overrides (an
    int subclass's operators, a failing or missing excepthook) makes it fail here."""
    if isinstance(exc, SystemExit):
        return _system_exit_status(exc)
    tb = _program_frames(exc.__traceback__)
    exc = exc.with_traceback(tb)
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    hook = getattr(sys, "excepthook", None)
    if hook is None:
        _write_stderr("sys.excepthook is missing\n")
        _display(exc, tb)
        return 1
    try:
        hook(type(exc), exc, tb)
    except SystemExit as raised:
        return _system_exit_status(raised)
    except BaseException as failed:  # noqa: BLE001 - printed, as the interpreter prints it
        _write_stderr("Error in sys.excepthook:\n")
        # the interpreter calls the hook from C, outside any handler: no context, no frame of ours
        failed.__context__ = None
        failed_tb = _program_frames(failed.__traceback__)
        _display(failed.with_traceback(failed_tb), failed_tb)
        _write_stderr("\nOriginal exception was:\n")
        _display(exc, tb)
    return 1


def _program_frames(tb: "TracebackType | None") -> "TracebackType | None":
    """A traceback without this file's frames at its start (a fresh interpreter's program
    runs under none)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def _system_exit_status(exc: SystemExit) -> int:
    """_Py_HandleSystemExit: the code's own int value (not its operators), else its str on
    stderr and 1; the exception itself stands for a code that cannot be read."""
    try:
        code: object = exc.code
    except Exception:  # noqa: BLE001 - as the interpreter: the exception is printed instead
        code = exc
    if code is None:
        return 0
    if isinstance(code, int):
        value = int.__int__(code)  # the int it is, whatever its class overrides
        return value & 0xFF if -(1 << 63) <= value < (1 << 63) else 255
    try:
        text = str(code)
    except Exception:  # noqa: BLE001
        text = ""
    _write_stderr(f"{text}\n")
    return 1


# the interpreter's own printing of an exception (PyErr_Display), whatever the program does to sys
_DISPLAY = sys.__excepthook__


def _display(exc: BaseException, tb: "TracebackType | None") -> None:
    try:
        _DISPLAY(type(exc), exc, tb)
    except Exception:  # noqa: BLE001 - nothing more to print it with
        pass


def _write_stderr(text: str) -> None:
    """PySys_WriteStderr: to sys.stderr, else to descriptor 2."""
    try:
        stream = sys.stderr
        if stream is not None:
            stream.write(text)
            return
    except Exception:  # noqa: BLE001
        pass
    try:
        os.write(2, text.encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def _flush_stdout(status: int) -> int:
    stream = sys.stdout
    try:
        if stream is not None and not stream.closed:
            stream.flush()
    except Exception as exc:  # noqa: BLE001 - the interpreter's "Exception ignored" and status 120
        os.write(2, f"Exception ignored in: {stream!r}\n{type(exc).__name__}: {exc}\n".encode())
        status = 120
    try:
        if sys.stderr is not None and not sys.stderr.closed:
            sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    return status


def _finish(status: int, interrupted: bool, main_globals: "dict[str, Any]", zygote: Zygote) -> None:
    """The interpreter's shutdown, without tearing down the zygote's modules (that would
    copy every page shared with the zygote: 8 ms a test): wait for the program's threads,
    run its atexit functions, flush its output, release its objects (closing the files it
    left open) and exit with the status a fresh interpreter would."""
    if zygote.levels_left is not None:
        # the interpreter does this from C, under no frame: this function's is hidden too, so
        # that a program that left a recursion limit of a few levels still has its output
        # flushed and its atexit functions run as deep as there
        zygote.levels_left.value += 1
    threading = sys.modules.get("threading")
    alone = True
    if threading is not None:
        try:
            threading._shutdown()
            alone = threading.active_count() <= 1
        except Exception as exc:  # noqa: BLE001 - a program's threading module: reported, as there
            _write_stderr(f"Exception ignored in: {threading!r}\n")
            _display(exc.with_traceback(None), None)  # raised from this file: no frame of the program's
            alone = False
    atexit._run_exitfuncs()
    status = _flush_stdout(status)
    if alone:
        main_globals.clear()
    gc.collect()
    status = _flush_stdout(status)
    # the streams the program started with, if it replaced them (sys.stdout = None, or a
    # stream of its own): the interpreter's teardown releases them, which flushes them
    for stream in zygote.streams:
        try:
            if not stream.closed:
                stream.flush()
        except Exception:  # noqa: BLE001 - as a release's flush: ignored, the status stands
            pass
    if interrupted:
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
        os.kill(os.getpid(), _signal.SIGINT)
    os._exit(status)


_zygote = Zygote(sys.argv[1:])
_program, _globals = _zygote.serve()
# Only a test's program process gets here.  The program's module frame sits right under
# this one and exec(), as it sits under none in a fresh interpreter (discounted above).
try:
    if isinstance(_program, BaseException):
        raise _program  # what compiling it raised, printed and exited with as the interpreter does
    exec(_program, _globals)
    _status, _interrupted = 0, False
except BaseException as _exc:  # noqa: BLE001 - what the interpreter does with it, below
    _status, _interrupted = _exit_status(_exc), isinstance(_exc, KeyboardInterrupt)
    del _exc
_finish(_status, _interrupted, _globals, _zygote)
