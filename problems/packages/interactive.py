"""Interactive problems: a package's interactor talking with the program (sandbox/interactive.py).

Two formats: testlib (`interactor input output`, the program on its stdin/stdout, exit 0 OK,
1 WA, 2 PE, 3 FAIL; the `output` file it writes goes to the package's checker when there is
one) and Kattis (`validator input answer feedback_dir [flags]`, the program's output on its
stdin, its stdout to the program, 42 accept, 43 reject). The interactor is C++ (testlib or
not) or Python 3, with a shim, as external.py's judges are: the C++ shim's constructor (or the
Python shim, whose child runs `python3 <entry> <args>`) reads the test (input, answer) from
the start of its stdin, writes the files into its private /tmp, and runs the interactor in a
child whose stdin and stdout stay the pipes to the program; it reports the child's end, its
stderr, the feedback files and testlib's output file on its own stderr (hex, within the
runner's 4 KB tail). What the two sides said to each other comes back as the test's
interaction log (sandbox/interactive.py's relay).

The verdict follows problemtools (verifyproblem's interactive judging): an interactor that
failed (FAIL, any other exit, a crash, a limit, a compile error, no report) is a judging
error, SE, whatever the program did; an interactor that rejected the program and ended first
decides (WA), even if the program then crashed or ran out of time; otherwise a program that
exceeded a limit or crashed gets that verdict; otherwise the interactor's verdict stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from problems.models import PackageJudge, TestSuite
from problems.packages.external import (
    Case,
    ExternalJudge,
    JudgeUnavailable,
    Kind,
    Outcome,
    _inline,
    compile_failure,
    judge_compile,
    judge_limits,
    needs_testlib,
    run_judge,
    testlib_header,
)
from sandbox import CompiledProgram, Limits, RunResult, Sandbox, Verdict
from sandbox.interactive import InteractionLog, InteractiveRun, InteractiveSession

KATTIS = "kattis_interactor"
TESTLIB = "testlib_interactor"
REPORT_MAGIC = "HTS-INTERACT 1"
# what the shim reports of each stream, before hex (the runner keeps the last 4096 bytes of stderr)
TAILS = {"stderr": 300, "judgemessage.txt": 600, "teammessage.txt": 150, "output": 600}


@dataclass(frozen=True)
class Interactor:
    kind: str  # KATTIS or TESTLIB
    language: str
    entry: str
    files: tuple[tuple[str, str], ...]
    flags: tuple[str, ...] = ()

    def as_judge(self) -> ExternalJudge:
        # external.py's helpers (inlining, testlib.h) only read the files
        return ExternalJudge(kind=Kind.TESTLIB_CHECKER, language=self.language, entry=self.entry, files=self.files,
                             flags=self.flags)


@dataclass
class Judged:
    verdict: str  # AC, WA, TLE, MLE, OLE, RE or SE (PE is WA, its message says so)
    message: str
    program: RunResult
    interactor_first: bool = False
    # testlib's output file, as the interactor wrote it (what the checker judged)
    output: bytes = b""
    output_truncated: bool = False
    # what the program and the interactor sent each other (empty when the program never ran)
    log: InteractionLog = field(default_factory=InteractionLog)


_SHIM = r"""/* hardtests interactor shim 1 (see problems/packages/interactive.py) */
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
namespace hts_ishim {
static const char *ARGS[] = {@ARGS@ nullptr};
static void die(const char *what) { fprintf(stderr, "hts-ishim: %s: %s\n", what, strerror(errno)); _exit(120); }
static bool read_exact(char *buf, size_t size) {
    while (size) { ssize_t n = read(0, buf, size); if (n < 0 && errno == EINTR) continue; if (n <= 0) return false; buf += n; size -= (size_t)n; }
    return true;
}
static std::string line() {
    std::string s; char c;
    while (read_exact(&c, 1) && c != '\n') s += c;
    return s;
}
static void spill(const char *path, const std::string &data) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644); if (fd < 0) die(path);
    const char *p = data.data(); size_t left = data.size();
    while (left) { ssize_t n = write(fd, p, left); if (n < 0) { if (errno == EINTR) continue; die(path); } p += n; left -= (size_t)n; }
    close(fd);
}
static std::string tail_of(const char *path, size_t most) {
    std::string data; int fd = open(path, O_RDONLY); if (fd < 0) return data;
    char buf[1 << 16]; ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) data.append(buf, (size_t)n);
    close(fd);
    return data.size() > most ? data.substr(data.size() - most) : data;
}
static void emit(const char *name, const std::string &data, size_t whole) {
    static const char *hex = "0123456789abcdef";
    std::string all = std::string(name) + " " + std::to_string(whole) + " ";
    for (unsigned char c : data) { all += hex[c >> 4]; all += hex[c & 15]; }
    all += "\n";
    const char *p = all.data(); size_t left = all.size();
    while (left) { ssize_t n = write(2, p, left); if (n < 0) { if (errno == EINTR) continue; _exit(121); } p += n; left -= (size_t)n; }
}
static void report(const char *name, const char *path, size_t most) {
    struct stat st; size_t whole = stat(path, &st) == 0 ? (size_t)st.st_size : 0;
    emit(name, tail_of(path, most), whole);
}
__attribute__((constructor(101))) static void start(int argc, char **argv, char **envp) {
    if (argc > 0 && argv && argv[0] && strcmp(argv[0], "judge") == 0) return;
    if (line() != "HTSI1") { fprintf(stderr, "hts-ishim: bad request\n"); _exit(120); }
    if (chdir("/tmp") != 0) die("chdir /tmp");
    const char *names[] = {"input", "answer"};
    for (const char *name : names) {
        std::string size = line();
        if (size.empty()) { fprintf(stderr, "hts-ishim: bad request\n"); _exit(120); }
        std::string body(std::stoull(size), '\0');
        if (!read_exact(&body[0], body.size())) { fprintf(stderr, "hts-ishim: short request\n"); _exit(120); }
        spill(name, body);
    }
    if (mkdir("feedback", 0755) != 0 && errno != EEXIST) die("mkdir feedback");
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        int err = open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err < 0) die("open");
        dup2(err, 2);
        close(err);
        /* a program that has gone is an EPIPE to read about, not a signal that kills the interactor */
        signal(SIGPIPE, SIG_IGN);
        std::vector<char *> args;
        args.push_back(const_cast<char *>("judge"));
        for (const char **a = ARGS; *a; ++a) args.push_back(const_cast<char *>(*a));
        args.push_back(nullptr);
        execve("/proc/self/exe", args.data(), envp);
        die("exec");
    }
    /* the FIFOs are the child's alone: the program sees their end when the child's ends */
    int null = open("/dev/null", O_RDWR);
    if (null < 0) die("open /dev/null");
    dup2(null, 0); dup2(null, 1);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) { if (errno != EINTR) die("waitpid"); }
    std::string head = std::string("@MAGIC@\n") + (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
        : "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0)) + "\n";
    if (write(2, head.data(), head.size()) < 0) _exit(121);
    report("stderr", "stderr.txt", @T_STDERR@);
    report("judgemessage.txt", "feedback/judgemessage.txt", @T_JUDGE@);
    report("teammessage.txt", "feedback/teammessage.txt", @T_TEAM@);
    report("output", "output", @T_OUTPUT@);
    _exit(0);
}
}  // namespace hts_ishim
"""


def _c_string(text: str) -> str:
    return '"' + "".join(c if c.isalnum() or c in " ._-+/=:," else f"\\x{ord(c):02x}\"\"" for c in text) + '"'


_PY_SHIM = r'''
import os, sys

def _die(what):
    sys.stderr.write("hts-ishim: %s\n" % what)
    os._exit(120)

def _exact(size):
    parts = []
    while size:
        chunk = os.read(0, size)
        if not chunk:
            _die("short request")
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)

def _line():
    # byte by byte: what follows the prelude on this stdin is the program's, not the shim's
    out = bytearray()
    while True:
        c = os.read(0, 1)
        if not c or c == b"\n":
            return bytes(out)
        out += c

def _emit(name, data, whole):
    os.write(2, ("%s %d %s\n" % (name, whole, data.hex())).encode())

def _report(name, path, most):
    try:
        whole = os.stat(path).st_size
        with open(path, "rb") as fh:
            if whole > most:
                fh.seek(whole - most)
            data = fh.read()
    except OSError:
        whole, data = 0, b""
    _emit(name, data[-most:], whole)

def _main():
    if _line() != b"HTSI1":
        _die("bad request")
    os.chdir("/tmp")
    for name in ("input", "answer"):
        size = _line()
        if not size.isdigit():
            _die("bad request")
        with open(name, "wb") as fh:
            fh.write(_exact(int(size)))
    os.makedirs("feedback", exist_ok=True)
    for path, text in FILES.items():
        target = os.path.join("judge", path)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with open(target, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
    pid = os.fork()
    if pid == 0:
        try:
            err = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(err, 2)
            os.execv(sys.executable, [sys.executable, os.path.join("judge", ENTRY), *ARGS])
        finally:
            os._exit(120)
    # the pipes are the interactor's alone: the program sees their end when the interactor's ends
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status):
        head = "exit %d" % os.WEXITSTATUS(status)
    else:
        head = "signal %d" % (os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0)
    os.write(2, ("%s\n%s\n" % (MAGIC, head)).encode())
    for name, path in (("stderr", "stderr.txt"), ("judgemessage.txt", "feedback/judgemessage.txt"),
                       ("teammessage.txt", "feedback/teammessage.txt"), ("output", "output")):
        _report(name, path, TAILS[name])
    os._exit(0)

_main()
'''
# the languages an interactor may be written in: the sandbox runs both, each with its shim
LANGUAGES = ("cpp", "python3")


def _args(interactor: Interactor) -> list[str]:
    return ["input", "output"] if interactor.kind == TESTLIB else ["input", "answer", "feedback/", *interactor.flags]


def refusal(interactor: Interactor) -> str | None:
    """Why this interactor cannot be built (before anything runs), or None."""
    if interactor.language not in LANGUAGES:
        return (f"an interactor in {interactor.language!r} is not supported here "
                "(C++ and Python 3 interactors are)")
    if dict(interactor.files).get(interactor.entry) is None:
        return f"the interactor's entry file {interactor.entry!r} is missing"
    judge = interactor.as_judge()
    if needs_testlib(judge) and testlib_header(judge) is None:
        return "the interactor includes testlib.h and none is available (HARDTESTS_TESTLIB_H, or a testlib.h in the package)"
    return None


def shim_source(interactor: Interactor) -> tuple[str, str]:
    """(sandbox language, source) of the interactor with its shim; JudgeUnavailable if it
    cannot be built. A Python interactor runs as `python3 <entry> <args>` (its files beside
    it, so it may import them) in a child of the Python shim, as Kattis runs one."""
    reason = refusal(interactor)
    if reason is not None:
        raise JudgeUnavailable(reason)
    args = _args(interactor)
    if interactor.language == "python3":
        head = (f"FILES = {dict(interactor.files)!r}\nENTRY = {interactor.entry!r}\nARGS = {args!r}\n"
                f"MAGIC = {REPORT_MAGIC!r}\nTAILS = {TAILS!r}\n")
        return "python3", head + _PY_SHIM
    judge = interactor.as_judge()
    body = _inline(judge, interactor.entry, {interactor.entry}, testlib_header(judge))
    shim = (_SHIM.replace("@ARGS@", "".join(f"{_c_string(a)}, " for a in args))
            .replace("@MAGIC@", REPORT_MAGIC)
            .replace("@T_STDERR@", str(TAILS["stderr"])).replace("@T_JUDGE@", str(TAILS["judgemessage.txt"]))
            .replace("@T_TEAM@", str(TAILS["teammessage.txt"])).replace("@T_OUTPUT@", str(TAILS["output"])))
    return "cpp", f'{shim}#line 1 "{interactor.entry}"\n{body}\n'


def prelude(input_: bytes, answer: bytes) -> bytes:
    return b"HTSI1\n" + str(len(input_)).encode() + b"\n" + input_ + str(len(answer)).encode() + b"\n" + answer


def parse_report(stderr: str) -> tuple[str, int, dict[str, tuple[bytes, int]]] | None:
    """("exit"|"signal", number, {stream: (tail, whole size)}) from the shim's report, or None."""
    text = stderr[stderr.rfind(REPORT_MAGIC):] if REPORT_MAGIC in stderr else ""
    lines = text.split("\n")
    if len(lines) < 2:
        return None
    how, _, number = lines[1].partition(" ")
    if how not in ("exit", "signal") or not number.isdigit():
        return None
    parts: dict[str, tuple[bytes, int]] = {}
    for row in lines[2:]:
        words = row.split(" ")
        if len(words) != 3 or not words[1].isdigit():
            continue
        try:
            parts[words[0]] = (bytes.fromhex(words[2]), int(words[1]))
        except ValueError:
            return None
    return how, int(number), parts


def _interactor_outcome(interactor: Interactor, run: InteractiveRun) -> Outcome:
    """What the interactor said: a verdict (AC, WA, PE) or a judging failure with the reason."""
    ran = run.interactor
    if run.prelude_unread:
        return Outcome(failed=True, message="the interactor ended or stalled before reading the test: "
                       + ran.stderr.strip()[-500:])
    if ran.verdict != Verdict.OK:
        what = {Verdict.TLE: "exceeded its time limit", Verdict.MLE: "exceeded its memory limit",
                Verdict.SE: "could not run (sandbox error)", Verdict.RE: "crashed"}.get(ran.verdict, str(ran.verdict))
        return Outcome(failed=True, message=f"the interactor {what}: {ran.stderr.strip()[-500:]}")
    report = parse_report(ran.stderr)
    if report is None:
        return Outcome(failed=True, message=f"the interactor's shim gave no report: {ran.stderr.strip()[-500:]}")
    how, number, parts = report
    text = {k: v[0].decode("utf-8", "replace") for k, v in parts.items()}
    feedback = {k: text[k] for k in ("judgemessage.txt", "teammessage.txt") if text.get(k)}
    message = (feedback.get("judgemessage.txt") or text.get("stderr", "")).strip()
    outcome = Outcome(exit_code=number if how == "exit" else None, feedback=feedback, message=message)
    if how == "signal":
        outcome.failed, outcome.message = True, f"the interactor was killed by signal {number}: {message}"
        return outcome
    if interactor.kind == TESTLIB:
        verdict = {0: "AC", 1: "WA", 2: "PE", 4: "PE", 8: "PE"}.get(number)
    else:
        verdict = {42: "AC", 43: "WA"}.get(number)
    if verdict is None:
        meaning = "FAIL" if interactor.kind == TESTLIB and number == 3 else f"exit code {number}"
        outcome.failed, outcome.message = True, f"the interactor failed ({meaning}): {message}"
        return outcome
    outcome.verdict = verdict
    output, whole = parts.get("output", (b"", 0))
    outcome.feedback["output"] = output.decode("utf-8", "replace")
    if whole > len(output):
        outcome.feedback["output_truncated"] = str(whole)
    return outcome


def decide(interactor: Interactor, run: InteractiveRun) -> tuple[str, str, Outcome]:
    """(verdict, message, the interactor's outcome) of one interactive test, by problemtools' rules."""
    said = _interactor_outcome(interactor, run)
    if said.failed:
        return "SE", f"judging error: {said.message}"[:4000], said
    program = run.program
    wrong = said.verdict in ("WA", "PE")
    message = (f"presentation error: {said.message}" if said.verdict == "PE" else said.message)[:4000]
    if wrong and run.interactor_first:
        return "WA", message, said
    if program.verdict == Verdict.SE:
        return "SE", f"judging error: {program.stderr.strip()[-2000:]}", said
    if program.verdict != Verdict.OK:
        return str(program.verdict), program.stderr.strip()[-2000:], said
    return ("WA" if wrong else "AC"), message, said


def judge_runs(sb: Sandbox, interactor: Interactor, program: CompiledProgram, tests: Sequence[tuple[bytes, bytes]],
               limits: Limits, *, checker: ExternalJudge | None = None,
               interactor_limits: Limits | None = None, fail_fast: bool = False) -> list[Judged]:
    """Each (input, answer) test judged interactively; a testlib interactor's output file then goes
    to `checker` (testlib's `checker input output answer`) when the interactor accepted. With
    `fail_fast` the tests stop at the first the interactor does not accept."""
    if not tests:
        return []
    try:
        language, source = shim_source(interactor)
    except JudgeUnavailable as exc:
        return [Judged("SE", f"judging error: {exc}", RunResult(verdict=Verdict.SE)) for _ in tests]
    built = judge_compile(sb, language, source)
    if not built.ok:
        reason = f"judging error: {compile_failure('the interactor', built)}"
        return [Judged("SE", reason, RunResult(verdict=Verdict.SE)) for _ in tests]
    if not program.ok:
        return [Judged(str(program.verdict), program.message[-4000:], RunResult(verdict=program.verdict))
                for _ in tests]
    judged: list[Judged] = []
    session = InteractiveSession(sb, program, built, limits, interactor_limits or judge_limits())
    try:
        for input_, answer in tests:
            run = session.run(prelude(input_, answer))
            verdict, message, said = decide(interactor, run)
            output = said.feedback.get("output", "").encode()
            judged.append(Judged(verdict, message, run.program, run.interactor_first, output,
                                 "output_truncated" in said.feedback, run.log))
            if fail_fast and verdict != "AC":
                break
    finally:
        session.close()
    if checker is not None:
        accepted = [(k, t) for k, (j, t) in enumerate(zip(judged, tests, strict=False)) if j.verdict == "AC"]
        truncated = [k for k, _ in accepted if judged[k].output_truncated]
        outcomes = run_judge(sb, checker, [Case(t[0], judged[k].output, t[1]) for k, t in accepted])
        for (k, _), outcome in zip(accepted, outcomes, strict=True):
            if k in truncated:
                judged[k].verdict = "SE"
                judged[k].message = (f"judging error: the interactor's output file is over {TAILS['output']} bytes, "
                                     "more than interactive judging passes to the checker")
            elif outcome.failed:
                judged[k].verdict, judged[k].message = "SE", f"judging error: {outcome.message}"[:4000]
            elif outcome.verdict != "AC":
                judged[k].verdict = "WA"
                judged[k].message = (("presentation error: " if outcome.verdict == "PE" else "") + outcome.message)[:4000]
    return judged


def suite_interactor(suite: TestSuite) -> Interactor | None:
    """The interactor that judges `suite` (a package's interactive problem), or None."""
    if not suite.checker_id:
        return None
    row = PackageJudge.objects.filter(pk=suite.checker_id, kind__in=PackageJudge.INTERACTOR_KINDS).first()
    if row is None:
        return None
    return Interactor(kind=row.kind, language=row.language, entry=row.entry,
                      files=tuple(sorted((row.files or {}).items())), flags=tuple(row.flags or []))

