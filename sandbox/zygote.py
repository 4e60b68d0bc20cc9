"""hts-zygote: a started Python interpreter that forks each test of a batch (issue: bare
Python spends ~6.5 ms of its ~9 ms a test starting the interpreter).

hts-runner (-Z) starts this file inside the batch's sandbox, in place of the program, with
the environment the program would get, and talks to it over a SEQPACKET socket (fd 3):
for each test it sends the test's stdin, stdout, stderr and report descriptors; the zygote
forks a test init into a new PID namespace and answers with its pid and a pidfd.  The init
(pid 1 there) gives itself new mount, IPC and UTS namespaces, mounts a fresh /tmp,
/dev/shm and /proc, hides the runner's directories, joins the test cgroup and forks the
program process, which sets the same limits as hts-runner's exec path, drops every
capability, installs the batch's seccomp filter (fd 4, built by the runner with
libseccomp) and only then runs the program's code as `__main__`.  So a test gets exactly
the isolation of a test started with execve: only the interpreter start is shared.

The zygote runs only this file: it never reads a test's data, and a test cannot reach it
(it lives outside the test's PID namespace, and the program runs without capabilities,
under the filter, in a forked copy).  Nothing a test does to its copy of the interpreter
reaches the next test, which is forked from the untouched zygote again.

What a program can tell apart from a fresh `python3 -I main.py`: modules this file
imported are already in sys.modules, the string hash seed is the batch's (one per batch,
not one per test), and the interpreter's pages shared with the zygote are not charged to
the test's memory cgroup (about 8 MB less than a fresh interpreter).  The recursion limit
counts as in a fresh interpreter (the levels this file adds are discounted).
"""

import atexit
import ctypes
import gc
import importlib.machinery
import io
import os
import resource
import signal
import socket
import struct
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID = 0x20000, 0x4000000, 0x8000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 0x4000, 0x40000
PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_SET_SECUREBITS, PR_CAP_AMBIENT = 24, 22, 38, 28, 47
PR_CAP_AMBIENT_CLEAR_ALL, SECCOMP_MODE_FILTER, PR_SET_DUMPABLE = 4, 2, 4
# NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP, NO_SETUID_FIXUP_LOCKED, KEEP_CAPS_LOCKED
SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
SYS_CAPSET = 126  # x86_64
REPORT = struct.Struct("iiqq")
# recursion levels under the program's module frame that a fresh interpreter does not have:
# this file's module frame and the exec() call
OWN_FRAMES = 2  # hts-runner's struct report: status, cg_err, cpu_us, maxrss_kb

libc = ctypes.CDLL(None, use_errno=True)
# clone(2) with the GIL held, wrapped like os.fork: a new PID namespace for the child alone,
# where unshare + setns back would not do (bubblewrap's --disable-userns puts us in a nested
# user namespace, which may make PID namespaces but not re-enter the one it was born in)
_syscall = ctypes.PyDLL(None, use_errno=True).syscall
_syscall.restype = ctypes.c_long
SYS_CLONE, SIGCHLD = 56, 17  # x86_64


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


class Zygote:
    def __init__(self, argv):
        (sock_fd, filter_fd, cg_fds, self.workdir, self.iodir, self.indir, tmpfs, cpu_s, as_bytes, fsize, nproc,
         nofile, stack, sep, *self.prog_argv) = argv
        assert sep == "--" and self.prog_argv, "usage: zygote.py <options> -- main.py [args]"
        self.sock = socket.socket(fileno=int(sock_fd))
        self.cg_fds = [int(fd) for fd in cg_fds.split(",") if fd]
        self.tmpfs_opts = f"size={int(tmpfs)},mode=1777".encode()
        self.limits = [(resource.RLIMIT_CPU, int(cpu_s), int(cpu_s) + 1), (resource.RLIMIT_FSIZE, int(fsize), int(fsize)),
                       (resource.RLIMIT_NPROC, int(nproc), int(nproc)), (resource.RLIMIT_NOFILE, int(nofile), int(nofile)),
                       (resource.RLIMIT_CORE, 0, 0), (resource.RLIMIT_MEMLOCK, 0, 0), (resource.RLIMIT_MSGQUEUE, 0, 0)]
        if int(as_bytes) > 0:
            self.limits.append((resource.RLIMIT_AS, int(as_bytes), int(as_bytes)))
        if int(stack) > 0:
            self.limits.append((resource.RLIMIT_STACK, int(stack), int(stack)))
        with os.fdopen(int(filter_fd), "rb") as handle:
            self.filter_bytes = ctypes.create_string_buffer(handle.read())
        self.fprog = _Fprog(len(self.filter_bytes.raw) // 8, ctypes.addressof(self.filter_bytes))
        path = self.prog_argv[0]
        with open(path, "rb") as handle:
            source = handle.read()
        try:
            self.code, self.error = compile(source, path, "exec", dont_inherit=True), None
        except (SyntaxError, ValueError) as exc:  # raised in each test, as a fresh interpreter would
            self.code, self.error = None, exc
        # the program's standard streams are made like the interpreter made ours
        self.stdio = [(stream.encoding, stream.errors, stream.line_buffering, stream.write_through)
                      for stream in (sys.stdin, sys.stdout, sys.stderr)]

    def serve(self):
        """Fork a test init per request; return only in a test's program process."""
        # the interpreter's own objects leave the collector's sight: a test's collections then
        # scan only its program's objects instead of copying every page of the zygote
        gc.freeze()
        # not dumpable: a program must never open its test init's /proc/1/mem (same uid) to
        # write a report of its choosing (the init's capabilities already refuse it; this holds
        # without them); the program process sets it back, as execve would
        _check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
        self.sock.send(b"ready")
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(self.sock, 16, 4)
            except ConnectionError:
                msg, fds = b"", []
            if msg != b"T" or len(fds) != 4:
                os._exit(0)  # the runner is done (or gone)
            self._reap()
            pid = _fork_new_pid_ns()
            if pid == 0:
                self.sock.close()
                return self._test_init(*fds)
            pidfd = os.pidfd_open(pid)
            socket.send_fds(self.sock, [struct.pack("i", pid)], [pidfd])
            for fd in (*fds, pidfd):
                os.close(fd)

    @staticmethod
    def _reap():
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass

    def _mount(self, source, target, fstype, flags, data):
        _check(libc.mount(source, target.encode(), fstype, flags, data), f"mount {target}")

    def _test_init(self, in_fd, out_fd, err_fd, rep_fd):
        """pid 1 of the test's PID namespace, as hts-runner's test_init."""
        try:
            # pid 1 ignores signals it has no handler for; Python's SIGINT handler would
            # let the program end its init with a KeyboardInterrupt
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _check(libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
            self._mount(None, "/", None, MS_REC | MS_PRIVATE, None)
            self._mount(b"tmpfs", "/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, self.tmpfs_opts)
            self._mount(b"tmpfs", "/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, self.tmpfs_opts)
            self._mount(b"proc", "/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
            for hidden in (self.iodir, self.indir):
                self._mount(b"tmpfs", hidden, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                            b"size=4k,mode=0555")
            cg_err = 0
            for fd in self.cg_fds:
                try:
                    os.pwrite(fd, b"0", 0)
                except OSError as exc:
                    cg_err = cg_err or exc.errno
            child = os.fork()
            if child == 0:
                os.close(rep_fd)
                return self._program(in_fd, out_fd, err_fd)
            for fd in (in_fd, out_fd, err_fd, *self.cg_fds):
                os.close(fd)
            _pid, status, usage = os.wait4(child, 0)
            cpu_us = round((usage.ru_utime + usage.ru_stime) * 1e6)
            os.write(rep_fd, REPORT.pack(status, cg_err, cpu_us, usage.ru_maxrss))
        except BaseException as exc:  # noqa: BLE001 - no report: the runner sees the init die
            os.write(2, f"hts-zygote: test init: {exc}\n".encode())
            os._exit(3)
        os._exit(0)  # the kernel now kills whatever else lives in this namespace

    def _program(self, in_fd, out_fd, err_fd):
        try:
            for fd, target in ((in_fd, 0), (out_fd, 1), (err_fd, 2)):
                os.dup2(fd, target)
            os.closerange(3, 1 << 20)
            os.chdir(self.workdir)
            try:
                with open("/proc/self/oom_score_adj", "w") as handle:
                    handle.write("1000")  # the kernel's OOM killer picks the program, not its init
            except OSError:
                pass
            for which, soft, hard in self.limits:
                resource.setrlimit(which, (soft, hard))
            _check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
            _check(libc.prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0), "securebits")
            for cap in range(64):
                if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
                    _check(-1, "capbset")
            libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
            header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
            data = (ctypes.c_uint32 * 6)()
            _check(libc.syscall(SYS_CAPSET, header, data), "capset")
            _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
            _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self.fprog), 0, 0), "seccomp")
        except BaseException as exc:  # noqa: BLE001 - exit 127, as hts-runner when execve fails
            os.write(2, f"hts-runner: cannot start the program: {exc}\n".encode())
            os._exit(127)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        streams = []
        for fd, (encoding, errors, line_buffering, write_through) in enumerate(self.stdio):
            mode = "rb" if fd == 0 else "wb"
            buffer = open(fd, mode, -1, closefd=False)
            stream = io.TextIOWrapper(buffer, encoding=encoding, errors=errors, newline="\n",
                                      line_buffering=line_buffering, write_through=write_through)
            stream.mode = mode[0]
            streams.append(stream)
        sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
        sys.argv = list(self.prog_argv)
        sys.orig_argv = [sys.executable, "-I", *self.prog_argv]
        main = type(sys)("__main__")
        main.__dict__.update(__file__=self.prog_argv[0], __builtins__=__builtins__, __cached__=None)
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", self.prog_argv[0])
        sys.modules["__main__"] = main
        _discount_own_frame()
        if self.error is not None:
            raise self.error
        return self.code, main.__dict__


def _fork_new_pid_ns():
    ctypes.pythonapi.PyOS_BeforeFork()
    pid = _syscall(ctypes.c_long(SYS_CLONE), ctypes.c_long(CLONE_NEWPID | SIGCHLD), ctypes.c_long(0),
                   ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    if pid == 0:
        ctypes.pythonapi.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    ctypes.pythonapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


def _discount_own_frame():
    """This file's module frame and exec() sit under the program's: levels hidden from the
    program, so that it recurses exactly as deep as in a fresh interpreter (tracebacks
    leave this file's frame out, in _exit_status)."""
    get, set_ = sys.getrecursionlimit, sys.setrecursionlimit
    set_(get() + OWN_FRAMES)

    def getrecursionlimit():
        return get() - OWN_FRAMES

    def setrecursionlimit(limit):
        set_(limit + OWN_FRAMES)

    sys.getrecursionlimit, sys.setrecursionlimit = getrecursionlimit, setrecursionlimit


def _exit_status(exc):
    """What a fresh interpreter exits with after `exc` ends its main module, once it has
    printed what it prints (the message of a SystemExit, else the traceback)."""
    if isinstance(exc, SystemExit):
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 255
        try:
            sys.stderr.write(f"{code}\n")
        except Exception:  # noqa: BLE001 - as the interpreter: the exit status stays 1
            pass
        return 1
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)
    return 1


def _flush_stdout(status):
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


def _finish(status, interrupted, main_globals):
    """The interpreter's shutdown, without tearing down the zygote's modules (that would
    copy every page shared with the zygote: 8 ms a test): wait for the program's threads,
    run its atexit functions, flush its output, release its objects (closing the files it
    left open) and exit with the status a fresh interpreter would."""
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    status = _flush_stdout(status)
    if threading is None or threading.active_count() <= 1:
        main_globals.clear()
    gc.collect()
    status = _flush_stdout(status)
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


_code, _globals = Zygote(sys.argv[1:]).serve()
# Only a test's program process gets here.  The program's module frame sits right under
# this one and exec(), as it sits under none in a fresh interpreter (discounted above).
try:
    exec(_code, _globals)
    _status, _interrupted = 0, False
except BaseException as _exc:  # noqa: BLE001 - what the interpreter does with it, below
    _status, _interrupted = _exit_status(_exc), isinstance(_exc, KeyboardInterrupt)
    del _exc
_finish(_status, _interrupted, _globals)
