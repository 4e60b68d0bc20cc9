"""Backend-independent parts: compiling through the cache, batches, verdicts."""

from __future__ import annotations

import abc
import glob
import hashlib
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import cache, languages
from .compare import compare_default
from .types import CompiledProgram, Limits, RunResult, SandboxUnavailable, Verdict

# A compile's wall clock stays close to its CPU limit, and output_kb caps every file it
# writes: a binary over 16 MB (`char a[1 << 29] = {1};`, `asm(".incbin \"/usr/lib/...\"")`)
# is CE, not a cache entry (a judge's program is a few hundred KB; initialised tables of
# 16 MB are not sources anyone submits).
COMPILE_LIMITS = Limits(time_s=20.0, memory_mb=2048, output_kb=16 * 1024, processes=64, wall_s=25.0)
# a compile whose CPU time has not grown for this long, while none of its processes waited
# for a CPU, waits for something that never comes (a pipe, /proc/self/fd/N): CE
COMPILE_IDLE_S = 2.0
# our own precompiled header (trusted input) is about 100 MB
PCH_LIMITS = Limits(time_s=60.0, memory_mb=2048, output_kb=1024 * 1024, processes=64, wall_s=120.0)
# It is built only where its disk has this much free (the header cache is 100-120 MB): on a
# smaller disk the build would fill it while it writes, and every compile beside it would find
# the disk full. Compiling without it is slower but the same program.
PCH_MIN_FREE_MB = 512
# a header cache that could not be built is not tried again by this process for this long (each
# try is seconds of CPU, on every C++ compile)
PCH_RETRY_S = 600.0
_pch_failed_at: dict[str, float] = {}
MB = 1024 * 1024
ALLOW_RUSAGE_ENV = "HARDTESTS_SANDBOX_ALLOW_RUSAGE"
ZYGOTE_ENV = "HARDTESTS_SANDBOX_ZYGOTE"
# how long past the wall-clock backstop a starved (not idle) program may go on
STARVED_FACTOR = 3
STARVED_EXTRA_S = 5.0
# stderr lines that mean the program ran out of memory under an address-space
# limit (or -Xmx) rather than being killed by the OOM killer
OOM_MARKERS = ("MemoryError", "std::bad_alloc", "java.lang.OutOfMemoryError", "Cannot allocate memory")


# strerror(ENOSPC), as compilers, assemblers and linkers print it
NO_SPACE = "No space left on device"


def _disk_was_full(build: Path) -> bool:
    """Whether the disk of a failed build had less free space than one build may take before
    the build wrote anything: then its ENOSPC is the machine's. A build that itself wrote more
    than a build may take (the program's own doing) leaves at least that much once removed."""
    try:
        free = os.statvfs(build)
    except OSError:
        return True
    return free.f_bavail * free.f_frsize + cache.tree_size(build) < cache.max_artifact_bytes()


@dataclass
class RawResult:
    """What the runner measured for one test, before any judging."""

    status: int  # wait status as from waitpid
    cpu_us: int  # rusage of the program (and the children it waited for), -1 if unknown
    wall_us: int
    maxrss_kb: int
    cg_cpu_us: int  # cgroup CPU of everything the test started, -1 without cgroups
    cg_mem_kb: int
    oom_kills: int
    # 0 no, 1 CPU limit (cgroup), 2 wall-clock backstop on an idle program (sleeping,
    # blocked), 3 output limit, 4 wall-clock backstop on a program that was running or
    # waiting for a CPU most of the time (an overloaded machine, not the program)
    killed: int
    stdout: bytes | bytearray  # a bytearray as read from the runner: RunResult gets bytes
    stdout_truncated: bool
    stderr: bytes


@dataclass
class BatchSpec:
    argv: list[str]
    language: str
    limits: Limits
    inputs_dir: Path
    prog_dir: Path | None = None
    build_dir: Path | None = None
    pch_dir: Path | None = None
    workdir: str = "/tmp"
    # a Python program's tests forked from a started interpreter (backends that can)
    zygote: bool = False

    @property
    def is_java(self) -> bool:
        return self.language == "java" or self.argv[0] == languages.JAVAC

    def cpu_kill_us(self) -> int:
        # past 110% of the limit the verdict is TLE whatever happens, so stop there
        return int(self.limits.time_s * 1.1 * 1e6) + 50_000

    def wall_us(self) -> int:
        return int(self.limits.wall_limit_s * 1e6)

    def starved_wall_us(self) -> int:
        # past the backstop a program that is running or waiting for a CPU (a loaded
        # machine) may go on until this, then it is a sandbox error, never TLE
        return int((STARVED_FACTOR * self.limits.wall_limit_s + STARVED_EXTRA_S) * 1e6)

    def idle_kill_us(self) -> int:
        # only compiles: a program may sleep until the wall-clock backstop (TLE)
        return int(COMPILE_IDLE_S * 1e6) if self.build_dir is not None else 0

    def memory_bytes(self) -> int:
        # every language, Java included, is held to the problem's limit by the cgroup
        return self.limits.memory_mb * MB

    def nproc(self) -> int:
        # the JVM's own threads count against both the rlimit and pids.max
        return max(self.limits.processes, 256) if self.is_java else self.limits.processes


def zygote_enabled() -> bool:
    """HARDTESTS_SANDBOX_ZYGOTE (default on): fork Python tests from a started interpreter."""
    return os.environ.get(ZYGOTE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def rusage_allowed() -> bool:
    """HARDTESTS_SANDBOX_ALLOW_RUSAGE: judge with rusage alone where no cgroup gives CPU time."""
    return os.environ.get(ALLOW_RUSAGE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


NO_CPU_ACCOUNTING = (
    "no cgroup gives the CPU time of every process of a test here (rusage misses children nobody "
    f"waited for), so the sandbox refuses to judge; fix the cgroup setup or set {ALLOW_RUSAGE_ENV}=1 "
    "to accept rusage-only accounting"
)


class Batch(abc.ABC):
    # what measured time and memory; "rusage" only where explicitly allowed
    accounting = "cgroup"
    # how many tests may be asked for before the first of them is answered (a backend whose
    # runner reads its next command while its caller judges the last answer says 2)
    queue_depth = 1

    @abc.abstractmethod
    def run(self, index: int) -> RawResult: ...

    def send(self, index: int) -> None:
        """Ask for test `index`; `receive()` answers the asks in order (this default runs
        each at its `receive`)."""
        self.__dict__.setdefault("_asked", []).append(index)

    def receive(self) -> RawResult:
        return self.run(self.__dict__["_asked"].pop(0))

    @abc.abstractmethod
    def close(self) -> None: ...

    # set by abort(): the batch's tests in flight were abandoned on purpose (its caller no
    # longer wants them), so the runner's end is no sandbox error
    aborted = False

    def abort(self) -> None:
        """From another thread: abandon the tests in flight now (a backend that cannot just
        lets them finish). Sandbox.run then returns the results it has."""
        self.aborted = True

    def program_compiled(self) -> bool | None:
        """A Python batch whose tests fork from a started interpreter (the zygote), before its
        first test is asked for: True when that interpreter compiled the program as
        `python3 -I main.py` does (which answers the syntax check of languages.compile_step:
        the same compile), False when compiling raised, None when not known (no zygote, a
        backend that cannot say, a batch that failed or was aborted): then only the check says."""
        return None


def judge(raw: RawResult, limits: Limits, language: str) -> RunResult:
    exit_code = os.waitstatus_to_exitcode(raw.status) if raw.status >= 0 else None
    sig: int | None = None
    if exit_code is not None and exit_code < 0:
        sig, exit_code = -exit_code, None
    if raw.cg_cpu_us >= 0:
        time_us = raw.cg_cpu_us
    elif raw.cpu_us >= 0:
        time_us = raw.cpu_us
    else:
        time_us = raw.wall_us
    memory_kb = max(raw.maxrss_kb, raw.cg_mem_kb, 0)
    stderr = raw.stderr.decode("utf-8", "replace")
    limit_kb = limits.memory_mb * 1024
    failed = sig is not None or exit_code != 0
    if raw.stdout_truncated or raw.killed == 3:
        # output beyond the cap is final whatever else happened afterwards
        verdict = Verdict.OLE
    elif starved(raw, limits):
        # the wall clock ran out while the program wanted a CPU it did not get: not its fault
        verdict = Verdict.SE
        stderr = (
            f"sandbox error: the wall-clock backstop stopped the program after {raw.wall_us / 1e6:.1f} s with "
            f"{time_us / 1000:.0f} ms of CPU time (limit {limits.time_s * 1000:.0f} ms), while it was running "
            "or waiting for a CPU: the machine is overloaded; retry\n" + stderr
        )
    elif raw.killed or time_us > limits.time_s * 1e6 or sig == signal.SIGXCPU:
        verdict = Verdict.TLE
    elif (
        raw.oom_kills > 0
        or (sig == signal.SIGKILL and memory_kb >= 0.9 * limit_kb)
        or (failed and any(marker in stderr for marker in OOM_MARKERS))
        or memory_kb > limit_kb
    ):
        verdict = Verdict.MLE
    elif sig == signal.SIGXFSZ:
        verdict = Verdict.OLE
    elif failed:
        verdict = Verdict.RE
    else:
        verdict = Verdict.OK
    return RunResult(
        verdict=verdict,
        exit_code=exit_code,
        signal=sig,
        time_ms=round(time_us / 1000),
        wall_ms=round(raw.wall_us / 1000),
        memory_kb=memory_kb,
        # a large output stays the bytearray it was read into: a copy would double the peak
        stdout=raw.stdout,  # type: ignore[arg-type]
        stdout_truncated=raw.stdout_truncated,
        stderr=stderr,
    )


def starved(raw: RawResult, limits: Limits) -> bool:
    """Killed by the wall clock with CPU time under the limit, while not idle."""
    time_us = raw.cg_cpu_us if raw.cg_cpu_us >= 0 else raw.cpu_us
    return raw.killed == 4 and 0 <= time_us <= limits.time_s * 1e6


# A re-run this much faster than the first run is not the same computation (a stored
# answer read back, a warm page cache that another test prepared): it may confirm the
# first verdict, never overturn it.
RERUN_MIN_RATIO = 0.5


def rerun_kept(first: RunResult, again: RunResult) -> RunResult:
    """Which of a near-limit test's two runs stands: an SE (the machine withheld the CPU)
    is replaced by the re-run; otherwise the faster, unless it is under half of the first
    run's CPU time and changes the verdict, where the first stands."""
    if first.verdict == Verdict.SE:
        return again
    if again.time_ms >= first.time_ms:
        return first
    if again.verdict != first.verdict and again.time_ms < RERUN_MIN_RATIO * first.time_ms:
        return first
    return again


# How many near-limit re-runs one call may spend (Sandbox.run's `reruns`, shared by every batch
# of a verification): past them, a near-limit run's first measurement stands. A program on the
# edge of its limit on every test otherwise doubled its call's time (60 tests at 1.05x: a 503
# timeout where its verdict, TLE, was known).
NEAR_LIMIT_RERUNS = 2


class RerunBudget:
    """The near-limit re-runs left to one call (thread-safe: a verification's lanes share one)."""

    def __init__(self, limit: int = NEAR_LIMIT_RERUNS) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.used >= self.limit:
                return False
            self.used += 1
            return True


def _near_limit(result: RunResult, limits: Limits) -> bool:
    """Whether a re-run could change the verdict: a TLE within 10% over the limit (a noisy
    machine's measurement; a faster re-run may be OK). An OK run is final, however near: a re-run
    is kept only when faster, so it could never be anything but OK."""
    limit_ms = limits.time_s * 1000
    return result.verdict == Verdict.TLE and limit_ms < result.time_ms <= 1.1 * limit_ms


def _digest(result: RunResult, expected: bytes | str | None, checker: Callable[[bytes, bytes], bool] | None,
            keep_kb: int) -> None:
    out = result.stdout
    result.stdout_size = len(out)
    result.stdout_sha256 = hashlib.sha256(out).hexdigest()
    if expected is not None and result.verdict == Verdict.OK:
        wanted = expected.encode() if isinstance(expected, str) else expected
        if checker is None:
            # identical bytes match under any comparison; the default one builds line lists
            # several times the output's size, so it only runs on outputs that differ
            result.matched = wanted == out or compare_default(wanted, out)
        else:
            result.matched = bool(checker(wanted, out))
    result.stdout = bytes(out[: keep_kb * 1024])


class Sandbox(abc.ABC):
    name = "abstract"

    @abc.abstractmethod
    def open_batch(self, spec: BatchSpec) -> Batch: ...

    def keep_warm(self, count: int | None = None) -> int:
        """Start sandboxes before batches need them, in a long-lived process (backends that
        can; `count` per kind of batch, default $HARDTESTS_SANDBOX_WARM); how many it keeps."""
        return 0

    def batches_compile_python(self) -> bool:
        """Whether this backend's Python batches say what compiling the program gave
        (Batch.program_compiled), so that the syntax check waits for that answer instead of
        starting beside the tests."""
        return False

    def settle_warm(self) -> None:
        """Wait until the sandboxes asked for so far have started, and those of closed batches
        have ended (the benches count that work as part of the batch that asked)."""
        return None

    # -- compiling -------------------------------------------------------

    def compile(self, language: str, source: str, *, cpp_std: str = "c++17",
                whole_program: bool = False) -> CompiledProgram:
        """Build a program through the compile cache. `whole_program` (C++ only): a judge's own
        tool, one translation unit built with -fwhole-program (languages.WHOLE_PROGRAM)."""
        try:
            source.encode("utf-8")
        except UnicodeEncodeError as exc:
            # a lone surrogate (JSON can carry one): no compiler reads it; the program's fault
            return CompiledProgram(language, Verdict.CE, f"the source is not valid Unicode: {exc}\n")
        missing = languages.compiler_missing(language)
        if missing:
            # the machine's fault, not the program's: the runner's "cannot execute" would be a
            # CE, cached for the program (a C program on a worker without gcc)
            return CompiledProgram(language, Verdict.SE, f"sandbox error while compiling: {missing}")
        step = languages.compile_step(language, source, cpp_std=cpp_std, whole_program=whole_program)
        key = cache.key_of(language, step.flags_key, cache.tool_fingerprint(step.tool), source)
        final = cache.entry_path("prog", key)
        started = time.monotonic()
        meta = cache.read_meta(final)
        if meta is None:
            with cache.key_lock("prog", key):
                meta = cache.read_meta(final)
                if meta is None:
                    try:
                        meta = self._build(step, language, source, cpp_std, key)
                    except (OSError, SandboxUnavailable) as exc:
                        return CompiledProgram(language, Verdict.SE, f"sandbox error while compiling: {exc}")
                    cached = False
                else:
                    cached = True
        else:
            cached = True
        return CompiledProgram(
            language=language,
            verdict=Verdict(meta["verdict"]),
            message=meta["message"],
            path=str(final),
            main_class=meta.get("main_class", ""),
            compile_ms=round((time.monotonic() - started) * 1000),
            cached=cached,
        )

    def _build(self, step: languages.CompileStep, language: str, source: str, cpp_std: str, key: str) -> dict[str, Any]:
        pch = self._pch_dir(cpp_std) if step.needs_pch else None
        build = cache.build_dir()
        try:
            (build / step.source_name).write_text(source, encoding="utf-8")  # what every compiler here reads
            if language == "java":
                (build / "classes").mkdir()
                if cache.sandbox_uid() is not None:
                    os.chown(build / "classes", cache.NOBODY, cache.NOBODY)
            result = self._execute(step.argv, language, COMPILE_LIMITS, build_dir=build, pch_dir=pch)
            if result.verdict == Verdict.SE:
                # a sandbox problem (overload), not a property of the source: nothing is cached
                raise SandboxUnavailable(result.stderr.strip())
            if result.verdict == Verdict.OK:
                meta = {"verdict": "OK", "message": result.stderr}
            elif result.verdict in (Verdict.TLE, Verdict.MLE, Verdict.OLE):
                meta = {"verdict": "CE", "message": f"compilation exceeded its limits ({result.verdict})\n"
                        + result.stderr}
            else:
                message = result.stderr or result.stdout.decode("utf-8", "replace")
                if NO_SPACE in message and _disk_was_full(build):
                    # the compiler (or its linker) found the machine's disk full before this
                    # build took its share: the machine's failure, never cached as the program's CE
                    raise SandboxUnavailable(f"the disk is full while compiling: {message.strip()[-500:]}")
                meta = {"verdict": "CE", "message": message}
            meta["main_class"] = step.main_class
            meta["language"] = language
            cache.write_meta(build, meta)
            cache.publish("prog", key, build)
        finally:
            if build.exists():
                shutil.rmtree(build, ignore_errors=True)
        return meta

    def _pch_dir(self, cpp_std: str) -> Path | None:
        headers = sorted(glob.glob(languages.STDCXX_HEADER_GLOB))
        if not headers:
            return None
        header = headers[-1]
        key = cache.key_of("pch", header, " ".join(languages.cpp_flags(cpp_std)),
                           cache.tool_fingerprint(languages.GXX))
        final = cache.entry_path("pch", key)
        if (final / "bits" / "stdc++.h.gch").exists():
            return final
        failed_at = _pch_failed_at.get(key)
        if failed_at is not None and time.monotonic() - failed_at < PCH_RETRY_S:
            return None
        with cache.key_lock("pch", key):
            if (final / "bits" / "stdc++.h.gch").exists():
                return final
            build = cache.build_dir()
            if shutil.disk_usage(build).free < PCH_MIN_FREE_MB * MB:
                shutil.rmtree(build, ignore_errors=True)
                return None  # compiling without the header cache is slower but correct
            (build / "bits").mkdir()
            if cache.sandbox_uid() is not None:
                os.chown(build / "bits", cache.NOBODY, cache.NOBODY)
            result = self._execute(languages.pch_step(header, cpp_std), "cpp", PCH_LIMITS, build_dir=build)
            if result.verdict != Verdict.OK:
                shutil.rmtree(build, ignore_errors=True)
                _pch_failed_at[key] = time.monotonic()
                return None
            _pch_failed_at.pop(key, None)
            return cache.publish("pch", key, build)

    def _execute(self, argv: list[str], language: str, limits: Limits, *, build_dir: Path,
                 pch_dir: Path | None = None) -> RunResult:
        inputs = cache.make_private_dir()
        try:
            spec = BatchSpec(argv=argv, language=language, limits=limits, inputs_dir=inputs,
                             build_dir=build_dir, pch_dir=pch_dir, workdir=languages.BUILD_DIR)
            result = self._run_fresh(spec, -1, limits, language)
            if result.verdict == Verdict.SE:
                # stopped by the wall clock while it wanted a CPU: once more, in a fresh sandbox
                result = self._run_fresh(spec, -1, limits, language)
            return result
        finally:
            shutil.rmtree(inputs, ignore_errors=True)

    # -- running -----------------------------------------------------------

    @staticmethod
    def _judged(batch: Batch, index: int, limits: Limits, language: str) -> RunResult:
        result = judge(batch.run(index), limits, language)
        result.stdout = bytes(result.stdout)
        result.accounting = batch.accounting
        return result

    def _run_fresh(self, spec: BatchSpec, index: int, limits: Limits, language: str) -> RunResult:
        batch = self.open_batch(spec)
        try:
            return self._judged(batch, index, limits, language)
        finally:
            batch.close()

    def run(self, prog: CompiledProgram, inputs: Sequence[bytes | str], limits: Limits, *,
            stop_on_failure: bool = False, expected: Sequence[bytes | str] | None = None,
            checker: Callable[[bytes, bytes], bool] | None = None,
            keep_stdout_kb: int | None = None, stop_before: Callable[[int], bool] | None = None,
            stop_when: Callable[[RunResult], bool] | None = None,
            claim: Callable[[], int | None] | None = None,
            on_batch: Callable[[Batch], None] | None = None,
            inputs_key: str | None = None, reruns: RerunBudget | None = None) -> list[RunResult]:
        """Run `prog` on each input.

        `stop_before(index)` (asked before each test) and `stop_when(result)` (after each) end the batch
        early, returning the results so far: how parallel fail-fast judging stops its other lanes.

        With `claim`, the batch runs the inputs `claim()` hands out (indices, until it returns
        None), and the results are in that order: lanes that share one `claim` share the work,
        so a lane that gets ahead takes the tests a slower one has not reached. A test claimed
        and not run (the batch stopped early) has no result; after a sandbox error every test
        claimed, and every one still to claim, is SE.

        `on_batch(batch)` hears of the batch once it is open and its first tests are asked
        for: another thread may then `batch.abort()` it (in fail-fast judging, a lane whose
        tests in flight all come after another lane's failure), and this returns the results
        so far, not sandbox errors.

        With `expected` (one output per input), each OK result's stdout is compared as soon
        as it is read (`checker(expected, stdout)`, compare_default by default) into
        `RunResult.matched`; with `expected` or `keep_stdout_kb`, only a prefix of stdout is
        kept (64 KB by default) beside its size and SHA-256, so the worker holds one test's
        output at a time however much every test prints.

        A TLE within 10% over the limit is run once more in a fresh sandbox (and the faster run
        kept, rerun_kept) while `reruns` (default: a budget of NEAR_LIMIT_RERUNS for this call)
        has some left; a caller whose one verdict spans several calls (lanes, chunks) passes one
        budget to all. An SE is always run once more: the machine's failure, not the program's.

        `inputs_key` names `inputs` for good (the caller vouches that one key names one
        content): they are written once per process and kept for later batches
        (cache.inputs_acquire), not written again for every batch.
        """
        if not prog.ok:
            count = 1 if stop_on_failure else len(inputs)
            return [RunResult(verdict=prog.verdict, stderr=prog.message) for _ in range(min(count, len(inputs)))]
        if not inputs:
            return []
        budget = reruns if reruns is not None else RerunBudget()
        argv = languages.run_argv(prog.language, main_class=prog.main_class, memory_mb=limits.memory_mb)
        raw = [data.encode() if isinstance(data, str) else data for data in inputs]
        inputs_dir: Path | None = None
        results: list[RunResult] = []
        claimed = [0]  # how many tests `claim` gave this batch
        opened: list[Batch] = []
        try:
            # (a full disk here is the machine's failure: SE below, as for the sandbox's own)
            inputs_dir = cache.inputs_acquire(inputs_key, raw) if inputs_key is not None else cache.inputs_write(raw)
            spec = BatchSpec(argv=argv, language=prog.language, limits=limits, inputs_dir=inputs_dir,
                             prog_dir=Path(prog.path), zygote=prog.language == "python3" and zygote_enabled())
            batch = self.open_batch(spec)
            opened.append(batch)
            try:
                # the next test is asked for before this one's answer is judged (queue_depth 2),
                # so that the runner starts it at once; a stop leaves it unanswered (closing
                # the batch ends it), and a re-run waits for its answer first
                asked: list[int] = []
                early: dict[int, RawResult] = {}
                stopping = False

                def next_index() -> int | None:
                    if claim is not None:
                        got = claim()
                        claimed[0] += got is not None
                        return got
                    index = asked[-1] + 1 if asked else len(results)
                    return index if index < len(inputs) else None

                def ask_ahead() -> None:
                    nonlocal stopping
                    while not stopping and len(asked) < batch.queue_depth:
                        index = next_index()
                        if index is None:
                            stopping = True
                            return
                        if stop_before is not None and stop_before(index):
                            stopping = True
                            return
                        batch.send(index)
                        asked.append(index)

                ask_ahead()
                if on_batch is not None:
                    # after the first tests are asked for: a zygote batch's caller then waits
                    # here for the compile's answer (program_compiled) while the runner already
                    # has them, where asking after it cost a round trip on the first test's path
                    on_batch(batch)
                while asked:
                    index = asked[0]
                    if batch.aborted or (stop_before is not None and stop_before(index)):
                        break  # asked for ahead and no longer wanted: closing the batch ends it
                    asked.pop(0)
                    # (no name keeps the raw answer: its stdout, up to the output limit, would
                    # live on while the next answer is read)
                    result = judge(early.pop(index) if index in early else batch.receive(), limits, prog.language)
                    result.accounting = batch.accounting
                    if result.verdict == Verdict.SE or (_near_limit(result, limits) and budget.take()):
                        # noisy machines: a borderline TLE (while the call's budget lasts), or a run
                        # the wall clock stopped while it waited for a CPU, gets one more chance in a
                        # fresh sandbox (nothing of the first run is visible there), with the machine
                        # to itself: the test asked for next has finished first; the faster is kept,
                        # SE twice stays SE
                        for queued in asked:
                            early[queued] = batch.receive()
                        again = self._run_fresh(spec, index, limits, prog.language)
                        result = rerun_kept(result, again)
                    if expected is not None or keep_stdout_kb is not None:
                        _digest(result, None if expected is None else expected[index], checker,
                                keep_stdout_kb if keep_stdout_kb is not None else 64)
                    else:
                        result.stdout = bytes(result.stdout)
                    results.append(result)
                    if stop_on_failure and not result.ok:
                        break
                    if stop_when is not None and stop_when(result):
                        break
                    ask_ahead()
            finally:
                batch.close()
        except (OSError, SandboxUnavailable) as exc:
            if opened and opened[0].aborted:
                return results  # what was in flight was abandoned on purpose, not lost
            if claim is None:
                missing = len(inputs) - len(results)
            else:
                # every test this batch took on, and every one left: no test goes unjudged
                missing = claimed[0] - len(results)
                while claim() is not None:
                    missing += 1
            results.extend(RunResult(verdict=Verdict.SE, stderr=f"sandbox error: {exc}") for _ in range(missing))
            if stop_on_failure:
                del results[len(results) - missing + 1:]
        finally:
            if inputs_dir is not None and inputs_key is not None:
                cache.inputs_release(inputs_key)
            elif inputs_dir is not None:
                shutil.rmtree(inputs_dir, ignore_errors=True)
        return results
