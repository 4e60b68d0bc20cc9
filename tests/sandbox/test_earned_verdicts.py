"""Every verdict is earned: nothing a program leaves behind or does to the machine decides
another test's verdict, its own SE, or a re-run's (issue #31's classes, on both backends)."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import glob
import mmap
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from sandbox import Limits, RunResult, Sandbox, Verdict, cache, languages
from sandbox.base import COMPILE_LIMITS, Batch, BatchSpec, RawResult, rerun_kept
from tests.sandbox.conftest import run_one

REPO = Path(__file__).resolve().parents[2]


# -- idle is TLE, whatever the states of the test's tasks ----------------------------

IDLE_PROGRAMS = {
    # a zombie child (state Z) and a parent that sleeps
    "zombie": ("cpp", "#include <unistd.h>\nint main(){ if(fork()==0) _exit(0); sleep(100); }\n"),
    # a vfork parent waiting while its child sleeps
    "vfork": ("cpp", "#include <unistd.h>\n#include <sys/wait.h>\n"
              "int main(){ pid_t p = vfork(); if(p==0){ execl(\"/bin/sleep\",\"sleep\",\"100\",(char*)0); _exit(1);}"
              " waitpid(p,0,0); }\n"),
    "python zombie": ("python3", "import os, time\nif os.fork() == 0:\n    os._exit(0)\ntime.sleep(100)\n"),
    "java shell": ("java", "public class Main { public static void main(String[] a) throws Exception {\n"
                   "  new ProcessBuilder(\"sh\", \"-c\", \"true & exec sleep 100\").start().waitFor(); } }\n"),
}


@pytest.mark.parametrize("name", list(IDLE_PROGRAMS))
def test_an_idle_program_is_tle_at_the_backstop_whatever_its_tasks_states(any_sb: Sandbox, name: str) -> None:
    language, source = IDLE_PROGRAMS[name]
    limits = Limits(time_s=1)
    result = run_one(any_sb, language, source, time_s=1)
    assert result.verdict == Verdict.TLE, (result.verdict, result.stderr)
    # stopped at the backstop, not at the "starved" limit (3 x backstop + 5 s) nor run twice
    assert result.wall_ms <= 2 * limits.wall_limit_s * 1000, result.wall_ms
    assert result.time_ms < 500


def test_a_program_cannot_make_the_machine_starve_it(sb: Sandbox) -> None:
    """Lowering its own priority or pinning itself to one CPU would make a loaded machine
    withhold the CPU from it (a measured starvation, SE): the filter makes them no-ops."""
    source = r"""
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
int main() {
  struct sched_param sp = {0};
  int a = sched_setscheduler(0, SCHED_IDLE, &sp);
  int b = setpriority(PRIO_PROCESS, 0, 19);
  cpu_set_t one; CPU_ZERO(&one); CPU_SET(0, &one);
  int c = sched_setaffinity(0, sizeof one, &one);
  cpu_set_t now; sched_getaffinity(0, sizeof now, &now);
  printf("%d %d %d %d %d %d\n", a, b, c, sched_getscheduler(0), getpriority(PRIO_PROCESS, 0), CPU_COUNT(&now));
}
"""
    result = run_one(sb, "cpp", source)
    assert result.verdict == Verdict.OK, result.stderr
    policy_and_nice = result.stdout.split()[3:5]
    assert policy_and_nice == [b"0", b"0"]  # SCHED_OTHER, nice 0
    assert int(result.stdout.split()[5]) == len(os.sched_getaffinity(0))


# -- the page cache: no probe, no eviction --------------------------------------------

PROBE_FILE = min(glob.glob("/usr/lib/python3*/pydoc_data/topics.py"))

PROBES = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
int main() {
  int fd = open("PROBE_FILE", O_RDONLY);
  long size = lseek(fd, 0, SEEK_END);
  char *m = (char *)mmap(0, size, PROT_READ, MAP_SHARED, fd, 0);
  unsigned char vec[4096];
  errno = 0; int r1 = mincore(m, 4096, vec); int e1 = errno;
  struct { unsigned long long a[8]; } cs; struct { unsigned long long off, len; } range = {0, 0};
  errno = 0; long r2 = syscall(451, fd, &range, &cs, 0); int e2 = errno;
  char buf[4096]; struct iovec iov = {buf, sizeof buf};
  errno = 0; long r3 = preadv2(fd, &iov, 1, 0, RWF_NOWAIT); int e3 = errno;
  int r4 = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  for (long i = 0; i < size; i += 4096) buf[0] += m[i];
  errno = 0; int r5 = madvise(m, size, 21 /* MADV_PAGEOUT */); int e5 = errno;
  errno = 0; long r6 = readahead(fd, 0, size); int e6 = errno;
  printf("%d %d %ld %d %ld %d %d %d %d %ld %d\n", r1, e1, r2, e2, r3, e3, r4, r5, e5, r6, e6);
}
""".replace("PROBE_FILE", PROBE_FILE)


def _resident_pages(path: str) -> tuple[int, int]:
    """(resident, total) pages of a file in the host's page cache, by mincore."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    size = os.path.getsize(path)
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vec = (ctypes.c_ubyte * pages)()
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(size), vec) == 0, ctypes.get_errno()
        libc.munmap(ctypes.c_void_p(address), ctypes.c_size_t(size))
    finally:
        os.close(fd)
    return sum(v & 1 for v in vec), pages


def test_page_cache_probes_are_refused_and_evictions_do_nothing(any_sb: Sandbox) -> None:
    Path(PROBE_FILE).read_bytes()  # resident now, on the host
    assert _resident_pages(PROBE_FILE)[0] == _resident_pages(PROBE_FILE)[1]
    result = run_one(any_sb, "cpp", PROBES)
    assert result.verdict == Verdict.OK, result.stderr
    r1, e1, r2, e2, r3, e3, r4, r5, e5, r6, e6 = map(int, result.stdout.split())
    assert (r1, e1) == (-1, errno.EPERM)  # mincore
    assert (r2, e2) == (-1, errno.EPERM)  # cachestat
    assert (r3, e3) == (-1, errno.EOPNOTSUPP)  # preadv2(RWF_NOWAIT)
    assert (r4, r5, e5, r6, e6) == (0, 0, 0, 0, 0)  # fadvise, madvise(PAGEOUT), readahead: accepted...
    resident, total = _resident_pages(PROBE_FILE)
    assert resident == total  # ...and nothing was evicted


# -- a near-limit re-run confirms, it does not overturn --------------------------------


def _raw(cpu_ms: int, *, killed: int = 0, out: bytes = b"3\n") -> RawResult:
    return RawResult(status=0 if not killed else 9, cpu_us=cpu_ms * 1000, wall_us=cpu_ms * 1000,
                     maxrss_kb=1000, cg_cpu_us=cpu_ms * 1000, cg_mem_kb=1000, oom_kills=0, killed=killed,
                     stdout=out, stdout_truncated=False, stderr=b"")


class _Scripted(Sandbox):
    """A backend whose runs answer from a script: the first run of the test, then its re-run."""

    name = "scripted"

    def __init__(self, answers: list[RawResult]) -> None:
        self.answers = answers

    def open_batch(self, spec: BatchSpec) -> Batch:
        sandbox = self

        class _Batch(Batch):
            def run(self, index: int) -> RawResult:
                return sandbox.answers.pop(0)

            def close(self) -> None:
                pass

        return _Batch()


@pytest.mark.parametrize(("first", "again", "kept"), [
    (_raw(1080, killed=1), _raw(2), Verdict.TLE),  # the stored-answer re-run: TLE stays
    (_raw(1080, killed=1), _raw(950), Verdict.OK),  # a noisy first run: the faster counts
    (_raw(960), _raw(1090, killed=1), Verdict.OK),  # an OK run is final: never run again
])
def test_a_much_faster_rerun_cannot_overturn_the_first_verdict(first: RawResult, again: RawResult,
                                                               kept: Verdict, tmp_path: Path) -> None:
    from sandbox.types import CompiledProgram

    (tmp_path / "main.py").write_text("print(3)\n")
    backend = _Scripted([first, again])
    prog = CompiledProgram(language="cpp", verdict=Verdict.OK, path=str(tmp_path))
    [result] = backend.run(prog, ["1 2\n"], Limits(time_s=1))
    # a near-limit TLE was run again; an OK one is final (a re-run is kept only when faster)
    assert backend.answers == ([] if first.killed else [again])
    assert result.verdict == kept


def test_rerun_rule_keeps_an_se_s_rerun_and_the_faster_of_two_close_runs() -> None:
    se = RunResult(verdict=Verdict.SE, time_ms=10)
    ok = RunResult(verdict=Verdict.OK, time_ms=900)
    tle = RunResult(verdict=Verdict.TLE, time_ms=1100)
    assert rerun_kept(se, ok) is ok
    assert rerun_kept(tle, ok) is ok
    assert rerun_kept(tle, RunResult(verdict=Verdict.OK, time_ms=540)) is tle


# -- nothing of one test reaches the next ----------------------------------------------

FD_CYCLE = r"""
#include <bits/stdc++.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
int main() {
  char mode[16] = {0};
  if (scanf("%15s", mode) != 1) return 1;
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX;
  const char *n = "hts-kept-name"; memcpy(a.sun_path + 1, n, strlen(n));
  int r = bind(s, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + strlen(n));
  printf(r == 0 ? "bound\n" : "taken\n");
  if (!strcmp(mode, "leak")) {
    int sv[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int fds[6]; fds[0] = s; fds[1] = sv[0]; fds[2] = sv[1];
    for (int i = 0; i < 3; i++) {  /* three unlinked 60 MB tmpfs files */
      char p[32]; sprintf(p, "/dev/shm/f%d", i);
      int fd = open(p, O_RDWR | O_CREAT, 0600); if (ftruncate(fd, 60 << 20)) return 2;
      char *m = (char *)mmap(0, 60 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      for (long o = 0; o < (60 << 20); o += 4096) m[o] = 1;
      munmap(m, 60 << 20); unlink(p); fds[3 + i] = fd;
    }
    /* every socket in flight (none released at exit: the kernel's collector is not started) */
    char c = 'x'; struct iovec iov = {&c, 1}; char ctl[CMSG_SPACE(sizeof fds)]; memset(ctl, 0, sizeof ctl);
    struct msghdr mh; memset(&mh, 0, sizeof mh); mh.msg_iov = &iov; mh.msg_iovlen = 1;
    mh.msg_control = ctl; mh.msg_controllen = sizeof ctl;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof fds); memcpy(CMSG_DATA(cm), fds, sizeof fds);
    if (sendmsg(sv[1], &mh, 0) < 0) return 3;
  } else {  /* an honest 150 MB under 256 MB */
    size_t n = 150 << 20; volatile char *b = (volatile char *)malloc(n);
    for (size_t o = 0; o < n; o += 4096) b[o] = 1;
    long t = 0; for (size_t o = 0; o < n; o += 4096) t += b[o];
    printf("%ld\n", t);
  }
}
"""


def test_sockets_and_tmpfs_kept_by_an_fd_cycle_die_with_their_test(any_sb: Sandbox) -> None:
    prog = any_sb.compile("cpp", FD_CYCLE)
    assert prog.ok, prog.message
    inputs = ["leak", "check", "check", "leak", "check", "leak", "check"]
    results = any_sb.run(prog, inputs, Limits(time_s=5, memory_mb=256))
    for mode, result in zip(inputs, results, strict=True):
        assert result.verdict == Verdict.OK, (mode, result.verdict, result.stderr)
        assert result.stdout.split()[0] == b"bound", (mode, result.stdout)
        if mode == "check":
            assert 150 * 1024 <= result.memory_kb < 200 * 1024, result.memory_kb


DEEP_TREE = r"""
import os, sys
if sys.stdin.read().strip() == "make":
    os.chdir("/tmp")
    for _ in range(3000):  # ~9000 bytes of path: beyond PATH_MAX
        os.mkdir("dd")
        os.chdir("dd")
    with open("leftover", "w") as f:
        f.write("x")
    os.chmod(".", 0o500)
    print("made")
else:
    found = []
    for root in ("/tmp", "/dev/shm"):
        found += os.listdir(root)
    print("clean" if not found else "left: " + " ".join(found))
"""


def test_files_in_a_tree_deeper_than_path_max_do_not_reach_the_next_test(any_sb: Sandbox) -> None:
    prog = any_sb.compile("python3", DEEP_TREE)
    assert prog.ok, prog.message
    results = any_sb.run(prog, ["make", "look", "make", "look"], Limits(time_s=10))
    assert [r.stdout.strip() for r in results] == [b"made", b"clean", b"made", b"clean"], \
        [(r.verdict, r.stdout, r.stderr[-300:]) for r in results]


# -- memory is what the program holds ---------------------------------------------------

TWO_PROCESSES = r"""
#include <bits/stdc++.h>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  pid_t p = fork();
  size_t n = 37 << 20; volatile char *b = (volatile char *)malloc(n);
  for (size_t o = 0; o < n; o += 4096) b[o] = 1;
  sleep(0); usleep(300000);
  if (p == 0) _exit(0);
  int st; waitpid(p, &st, 0);
  puts("done");
}
"""


def test_two_processes_over_the_limit_together_are_mle(any_sb: Sandbox) -> None:
    result = run_one(any_sb, "cpp", TWO_PROCESSES, memory_mb=64, time_s=2)
    assert result.verdict == Verdict.MLE, (result.verdict, result.memory_kb, result.stdout)


def test_two_processes_under_the_limit_report_their_sum(any_sb: Sandbox) -> None:
    result = run_one(any_sb, "cpp", TWO_PROCESSES, memory_mb=128, time_s=2)
    assert result.verdict == Verdict.OK, result.stderr
    assert result.memory_kb >= 74 * 1024, result.memory_kb


BIG_SYSTEM_FILE = "/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip"
READ_FILE = f"""
import os
fd = os.open({BIG_SYSTEM_FILE!r}, os.O_RDONLY)
total = 0
while True:
    chunk = os.read(fd, 1 << 16)
    if not chunk:
        break
    total += len(chunk)
print(total)
"""


@pytest.mark.skipif(not os.path.exists(BIG_SYSTEM_FILE), reason="needs a large shared file")
def test_reported_memory_leaves_out_the_cache_of_shared_files_it_brought_in(any_sb: Sandbox) -> None:
    size = os.path.getsize(BIG_SYSTEM_FILE)
    fd = os.open(BIG_SYSTEM_FILE, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # as another user's program might have
    finally:
        os.close(fd)
    result = run_one(any_sb, "python3", READ_FILE, memory_mb=256, time_s=5)
    assert result.verdict == Verdict.OK, result.stderr
    assert int(result.stdout) == size
    # the interpreter's own ~10 MB, not the 50 MB of the file it read
    assert result.memory_kb < 30 * 1024, result.memory_kb


# -- CPU of every thread, compiles that cannot wait, no host path -------------------------

TWO_THREADS = r"""
#include <bits/stdc++.h>
#include <pthread.h>
#include <time.h>
static void *burn(void *) {
  struct timespec t;
  do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < 700);
  return nullptr;
}
int main() { pthread_t a, b; pthread_create(&a, 0, burn, 0); pthread_create(&b, 0, burn, 0);
  pthread_join(a, 0); pthread_join(b, 0); puts("done"); }
"""


def test_cpu_time_counts_every_thread(any_sb: Sandbox) -> None:
    result = run_one(any_sb, "cpp", TWO_THREADS, time_s=1)
    assert result.verdict == Verdict.TLE, (result.verdict, result.time_ms)
    assert result.time_ms > 1000


@pytest.mark.parametrize("source", [
    '#include "/proc/self/fd/1"\nint main(){}\n',
    '#include "/proc/self/fd/2"\nint main(){}\n',
])
def test_a_compile_that_waits_on_what_it_reads_is_ce_within_seconds(any_sb: Sandbox, source: str) -> None:
    started = time.monotonic()
    prog = any_sb.compile("cpp", source + f"// {time.time_ns()}\n")
    assert prog.verdict == Verdict.CE, prog.message
    # the idle compile is stopped after 2 s without CPU progress (the wall backstop is 25 s)
    assert time.monotonic() - started < 15


STALL = r"""
#include <time.h>
#include <unistd.h>
int main(void) {
  /* the parent waits for its vfork child in uninterruptible sleep (D), as a compiler does whose
     write is throttled or whose read waits for the disk; the child sleeps past the idle window */
  if (vfork() == 0) { struct timespec t = {4, 0}; nanosleep(&t, 0); _exit(0); }
  return 0;
}
"""


def test_a_compile_waiting_on_the_disk_is_not_idle(any_sb: Sandbox, tmp_path: Path) -> None:
    # the idle rule (2 s without CPU progress: CE) stops a compile that waits for nothing; one whose
    # task sits in D waits for the machine and goes on (the wall backstop, 25 s, still ends it). A
    # fresh clone's first C++20 compile, stalled on writeback, was a CE once.
    (tmp_path / "stall.c").write_text(STALL)
    build = cache.build_dir()
    try:
        subprocess.run(["gcc", "-O2", "-o", str(build / "stall"), str(tmp_path / "stall.c")], check=True)
        os.chmod(build / "stall", 0o755)
        started = time.monotonic()
        result = any_sb._execute([f"{languages.BUILD_DIR}/stall"], "cpp", COMPILE_LIMITS, build_dir=build)
        took = time.monotonic() - started
    finally:
        shutil.rmtree(build, ignore_errors=True)
    assert result.verdict == Verdict.OK, (result.verdict, result.stderr)
    assert took >= 4, took


def test_incbin_of_a_large_file_is_ce(any_sb: Sandbox) -> None:
    # the compiler's own binary: 20-60 MB, over a compile's 16 MB file limit
    big = min(glob.glob("/usr/lib/gcc/*/*/cc1plus"))
    assert 20 * 1024 * 1024 < os.path.getsize(big) < 60 * 1024 * 1024
    source = f'asm(".incbin \\"{big}\\"");\nint main(){{}}\n// {time.time_ns()}\n'
    prog = any_sb.compile("cpp", source)
    assert prog.verdict == Verdict.CE, prog.message
    assert cache.read_meta(Path(prog.path))["size"] < 1024 * 1024


def test_no_path_of_the_installation_is_visible_inside(any_sb: Sandbox) -> None:
    result = run_one(any_sb, "python3", "import sys\nsys.stdout.write(open('/proc/self/mountinfo').read())\n")
    assert result.verdict == Verdict.OK, result.stderr
    text = result.stdout.decode()
    assert "/.hts-bin" in text or "/.hts-prog" in text  # the binds are there...
    for secret in (str(REPO), str(cache.cache_root())):
        assert secret not in text  # ...named after nothing of the installation
