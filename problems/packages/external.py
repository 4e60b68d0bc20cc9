"""A package's own judges, run in the sandbox with their format's contract.

The sandbox gives a program stdin bytes and takes its stdout and exit status; judges of a
package want files and argv instead (testlib: `checker input output answer`; Kattis:
`validator input answer feedback_dir < output`). So each judge is compiled together with a
small shim: a constructor that runs before the judge's code (C++) or a harness that executes
its file (Python) reads the test's files from a framed stdin, writes them into the test's
private scratch directory (/tmp, wiped after every test), runs the judge in a child process
with the argv its format defines, and reports the child's exit status, its stderr and the
feedback files on stdout. The judge is still untrusted code under the sandbox's limits,
seccomp and compile cache; only its contract is adapted.

Exit statuses are read with the format's rules: testlib 0 OK, 1 WA, 2 PE (4 "dirt" and 8
unexpected EOF are PE too), 3 FAIL; Kattis 42 accept, 43 reject. Anything else (FAIL, a
crash, a signal, a time or memory limit, a compile error, a missing testlib.h) is a judging
failure: `Outcome.failed`, never the program's wrong answer.

testlib.h is never shipped by the project: it comes with the package (a file named
testlib.h among the judge's files) or from the HARDTESTS_TESTLIB_H setting (a path).
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import CompiledProgram, Limits, RunResult, Sandbox, Verdict

TESTLIB_H_ENV = "HARDTESTS_TESTLIB_H"
TESTLIB_H_HELP = (
    "testlib.h comes with the package or from the HARDTESTS_TESTLIB_H setting (the path of a testlib.h, "
    "e.g. from https://github.com/MikeMirzayanov/testlib); the project does not ship it"
)
# what the shim reports of a judge's own streams and files
REPORT_MAX = 64 * 1024
SHIM_MAGIC = b"HTSJ1\n"
# testlib's exit code for quitp (a scoring checker's points)
POINTS_EXIT = 7
REPLY_MAGIC = "HTS-JUDGE-REPLY 1"


class Kind(enum.StrEnum):
    TESTLIB_CHECKER = "testlib_checker"
    KATTIS_OUTPUT_VALIDATOR = "kattis_output_validator"
    TESTLIB_VALIDATOR = "testlib_validator"
    KATTIS_INPUT_VALIDATOR = "kattis_input_validator"
    # a testlib generator: argv in (the request's "input" part, NUL-separated), one test on stdout
    TESTLIB_GENERATOR = "testlib_generator"


# what the judge's stdin is (a file the shim opens for it) and its argv after argv[0]
_STDIN = {
    Kind.TESTLIB_CHECKER: "",
    Kind.KATTIS_OUTPUT_VALIDATOR: "output",
    Kind.TESTLIB_VALIDATOR: "input",
    Kind.KATTIS_INPUT_VALIDATOR: "input",
    Kind.TESTLIB_GENERATOR: "",
}
_ARGS = {
    Kind.TESTLIB_CHECKER: ["input", "output", "answer"],
    Kind.KATTIS_OUTPUT_VALIDATOR: ["input", "answer", "feedback/"],
    Kind.TESTLIB_VALIDATOR: [],
    Kind.KATTIS_INPUT_VALIDATOR: [],
    Kind.TESTLIB_GENERATOR: [],
}
LANGUAGES = ("cpp", "python3")


class JudgeUnavailable(ValueError):
    """A judge that cannot be built before anything runs (no testlib.h, a language the sandbox
    does not run, a missing file): the reason says which."""


@dataclass(frozen=True)
class ExternalJudge:
    """One program of a package: its kind, language, files (path -> text, the entry among
    them, headers beside it) and the flags its format passes after the fixed arguments."""

    kind: Kind
    language: str
    entry: str
    files: tuple[tuple[str, str], ...]
    flags: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """Names the judge for good: kind, language, entry, flags and every file."""
        payload = json.dumps([str(self.kind), self.language, self.entry, list(self.flags),
                              sorted(self.files)], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()

    def file(self, name: str) -> str | None:
        return dict(self.files).get(name)


@dataclass
class Outcome:
    """One judged test. `verdict`: AC, WA or PE for a program's output (checkers), AC or WA
    for an input (validators: valid or not); `failed` is a judging failure with its reason."""

    verdict: str = ""
    failed: bool = False
    message: str = ""
    exit_code: int | None = None
    feedback: dict[str, str] = field(default_factory=dict)
    time_ms: int = 0

    @property
    def accepted(self) -> bool:
        return not self.failed and self.verdict == "AC"


@dataclass(frozen=True)
class Case:
    input: bytes
    output: bytes = b""
    answer: bytes = b""


def testlib_header(judge: ExternalJudge | None = None) -> str | None:
    """The judge's own testlib.h, else the configured one, else None."""
    if judge is not None:
        own = judge.file("testlib.h")
        if own is not None:
            return own
    path = _configured_testlib_path()
    if path:
        try:
            return Path(path).read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            return None
    return None


def _configured_testlib_path() -> str:
    try:
        from django.conf import settings

        configured = settings.HARDTESTS_TESTLIB_H
    except ImportError:  # pragma: no cover - the project always has Django
        configured = ""
    return configured or os.environ.get(TESTLIB_H_ENV, "")


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<(testlib\.h)>)[ \t]*(?://.*)?$', re.MULTILINE)


def needs_testlib(judge: ExternalJudge) -> bool:
    if judge.language != "cpp":
        return False
    return any(m.group(2) or Path(m.group(1)).name == "testlib.h"
               for _, text in judge.files for m in _INCLUDE.finditer(text))


def refusal(judge: ExternalJudge) -> str | None:
    """Why this judge cannot be built (before anything runs), or None."""
    if judge.language not in LANGUAGES:
        return f"a {judge.kind} in {judge.language!r} is not supported (C++ and Python 3 are)"
    if judge.file(judge.entry) is None:
        return f"the judge's entry file {judge.entry!r} is missing"
    if needs_testlib(judge) and testlib_header(judge) is None:
        return f"the {judge.kind} includes testlib.h and none is available: {TESTLIB_H_HELP}"
    return None


def _inline(judge: ExternalJudge, name: str, seen: set[str], testlib: str | None) -> str:
    """The C++ file `name` with its local includes (package files, testlib.h) inlined once each,
    so the judge is one translation unit the sandbox's compiler builds alone."""
    text = judge.file(name)
    if text is None:
        raise JudgeUnavailable(f"{name!r} is included by the judge and missing from the package")
    base = str(Path(name).parent)

    def replace(match: re.Match[str]) -> str:
        wanted = match.group(1) or match.group(2)
        candidates = [str(Path(base) / wanted) if base != "." else wanted, wanted, Path(wanted).name]
        for candidate in candidates:
            if candidate in seen:
                return f"/* {wanted}: included above */"
            if judge.file(candidate) is not None:
                seen.add(candidate)
                return f'#line 1 "{candidate}"\n{_inline(judge, candidate, seen, testlib)}\n#line 1 "{name}"'
        if Path(wanted).name == "testlib.h" and testlib is not None:
            seen.add("testlib.h")
            return f'#line 1 "testlib.h"\n{testlib}\n#line 1 "{name}"'
        if match.group(1) is not None:
            # a quoted include of a system header ("bits/stdc++.h") stays for the compiler
            return match.group(0)
        raise JudgeUnavailable(f"the judge includes {wanted!r}, which is not available: {TESTLIB_H_HELP}")

    return _INCLUDE.sub(replace, text)


# The shim runs before the judge's own code: a constructor (ahead of every static initialiser)
# reads the request, writes the files, and starts the same binary again as a child with the
# judge's argv (argv[0] "judge" lets that child through to the judge's untouched main, whose
# implicit `return 0` and static destructors keep their meaning); it reports the child's end
# and leaves with _exit, so the judge's main never runs in the shim's own process.
_CPP_SHIM = r"""/* hardtests shim 2 (see problems/packages/external.py) */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
namespace hts_shim {
static const char *STDIN_FILE = "@STDIN@";
static const char *ARGS[] = {@ARGS@ nullptr};
static const size_t REPORT_MAX = @REPORT_MAX@;
static const bool GENERATOR = @GENERATOR@;
static void die(const char *what) { fprintf(stderr, "hts-shim: %s: %s\n", what, strerror(errno)); _exit(120); }
static std::string slurp(int fd) {
    std::string data; char buf[1 << 16]; ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) != 0) { if (n < 0) { if (errno == EINTR) continue; die("read"); } data.append(buf, (size_t)n); }
    return data;
}
static void spill(const char *path, const char *data, size_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644); if (fd < 0) die(path);
    while (size) { ssize_t n = write(fd, data, size); if (n < 0) { if (errno == EINTR) continue; die(path); } data += n; size -= (size_t)n; }
    close(fd);
}
static std::string whole(const char *path) {
    int fd = open(path, O_RDONLY); if (fd < 0) return std::string();
    std::string data = slurp(fd); close(fd);
    return data;
}
static std::string tail_of(const char *path) {
    std::string data = whole(path);
    return data.size() > REPORT_MAX ? data.substr(data.size() - REPORT_MAX) : data;
}
static void emit(const std::string &name, const std::string &data) {
    std::string all = name + " " + std::to_string(data.size()) + "\n" + data;
    const char *p = all.data(); size_t left = all.size();
    while (left) { ssize_t n = write(1, p, left); if (n < 0) { if (errno == EINTR) continue; _exit(121); } p += n; left -= (size_t)n; }
}
__attribute__((constructor(101))) static void start(int argc, char **argv, char **envp) {
    if (argc > 0 && argv && argv[0] && strcmp(argv[0], "judge") == 0) return;
    std::string in = slurp(0);
    const std::string magic = "HTSJ1\n";
    if (in.compare(0, magic.size(), magic) != 0) { fprintf(stderr, "hts-shim: bad request\n"); _exit(120); }
    size_t pos = magic.size();
    const char *names[] = {"input", "output", "answer"};
    if (chdir("/tmp") != 0) die("chdir /tmp");
    for (const char *name : names) {
        size_t eol = in.find('\n', pos);
        if (eol == std::string::npos) { fprintf(stderr, "hts-shim: bad request\n"); _exit(120); }
        size_t size = std::stoull(in.substr(pos, eol - pos));
        spill(name, in.data() + eol + 1, size);
        pos = eol + 1 + size;
    }
    std::string().swap(in);
    std::vector<std::string> extra;
    if (GENERATOR) {
        // the generator's argv came as the "input" part, NUL-separated
        std::string raw = whole("input");
        size_t start = 0;
        while (start < raw.size()) {
            size_t end = raw.find('\0', start);
            if (end == std::string::npos) end = raw.size();
            extra.push_back(raw.substr(start, end - start));
            start = end + 1;
        }
    }
    if (mkdir("feedback", 0755) != 0 && errno != EEXIST) die("mkdir feedback");
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        int src = STDIN_FILE[0] ? open(STDIN_FILE, O_RDONLY) : open("/dev/null", O_RDONLY);
        int out = GENERATOR ? open("generated", O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
        int err = open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (src < 0 || out < 0 || err < 0) die("open");
        dup2(src, 0); dup2(out, 1); dup2(err, 2);
        std::vector<char *> args;
        args.push_back(const_cast<char *>("judge"));
        for (const char **a = ARGS; *a; ++a) args.push_back(const_cast<char *>(*a));
        for (std::string &a : extra) args.push_back(&a[0]);
        args.push_back(nullptr);
        execve("/proc/self/exe", args.data(), envp);
        die("exec");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) { if (errno != EINTR) die("waitpid"); }
    std::string head = "@REPLY@\n";
    if (WIFEXITED(status)) head += "exit " + std::to_string(WEXITSTATUS(status));
    else head += "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    emit(head, "");
    emit("stderr", tail_of("stderr.txt"));
    emit("judgemessage.txt", tail_of("feedback/judgemessage.txt"));
    emit("teammessage.txt", tail_of("feedback/teammessage.txt"));
    if (GENERATOR) emit("generated", whole("generated"));
    _exit(0);
}
}  // namespace hts_shim
"""

_PY_SHIM = r'''
import os, sys

def _main():
    data = sys.stdin.buffer.read()
    magic = b"HTSJ1\n"
    if not data.startswith(magic):
        sys.stderr.write("hts-shim: bad request\n")
        os._exit(120)
    pos = len(magic)
    os.chdir("/tmp")
    for name in ("input", "output", "answer"):
        eol = data.index(b"\n", pos)
        size = int(data[pos:eol])
        with open(name, "wb") as fh:
            fh.write(data[eol + 1:eol + 1 + size])
        pos = eol + 1 + size
    del data
    os.makedirs("feedback", exist_ok=True)
    os.makedirs("judge", exist_ok=True)
    for path, text in FILES.items():
        target = os.path.join("judge", path)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with open(target, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            src = os.open(STDIN_FILE or "/dev/null", os.O_RDONLY)
            out = os.open("/dev/null", os.O_WRONLY)
            err = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(src, 0); os.dup2(out, 1); os.dup2(err, 2)
            entry = os.path.join("judge", ENTRY)
            os.execv(sys.executable, [sys.executable, entry, *ARGS])
        finally:
            os._exit(120)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status):
        head = "exit %d" % os.WEXITSTATUS(status)
    else:
        head = "signal %d" % (os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0)
    def tail(path):
        try:
            with open(path, "rb") as fh:
                return fh.read()[-REPORT_MAX:]
        except OSError:
            return b""
    out = sys.stdout.buffer
    out.write((REPLY + "\n" + head + " 0\n").encode())
    for name, path in (("stderr", "stderr.txt"), ("judgemessage.txt", "feedback/judgemessage.txt"),
                       ("teammessage.txt", "feedback/teammessage.txt")):
        body = tail(path)
        out.write(("%s %d\n" % (name, len(body))).encode() + body)
    out.flush()

_main()
'''


def judge_compile(sb: Sandbox, language: str, source: str) -> CompiledProgram:
    """A judge's tool from its shimmed source (shim_source), through the compile cache: C++ as one
    whole program with testlib's gnu++17 (sandbox.languages.WHOLE_PROGRAM: 2.3x less CPU for a
    testlib tool, the same -O2 code), any other language as a contestant's program."""
    if language == "cpp":
        return sb.compile("cpp", source, cpp_std="gnu++17", whole_program=True)
    return sb.compile(language, source)


def compile_failure(what: str, prog: CompiledProgram) -> str:
    """Why a judge's tool (`what`: "the checker", "the interactor") cannot judge, from its compile
    that failed: its own error (CE) or the machine's (a sandbox error), with the compiler's words."""
    how = "did not compile" if prog.verdict == Verdict.CE else "could not be compiled (sandbox error)"
    return f"{what} {how}: {prog.message.strip()[-2000:]}"


def shim_source(judge: ExternalJudge) -> tuple[str, str]:
    """(sandbox language, source) of the judge with its shim; JudgeUnavailable if it cannot be built."""
    reason = refusal(judge)
    if reason is not None:
        raise JudgeUnavailable(reason)
    stdin_file = _STDIN[judge.kind]
    args = [*_ARGS[judge.kind], *judge.flags]
    if judge.language == "python3":
        if judge.kind == Kind.TESTLIB_GENERATOR:
            raise JudgeUnavailable("a generator in Python is not supported here (testlib generators are C++)")
        head = (f"FILES = {dict(judge.files)!r}\nENTRY = {judge.entry!r}\nARGS = {args!r}\n"
                f"STDIN_FILE = {stdin_file!r}\nREPORT_MAX = {REPORT_MAX}\nREPLY = {REPLY_MAGIC!r}\n")
        return "python3", head + _PY_SHIM
    testlib = testlib_header(judge)
    body = _inline(judge, judge.entry, {judge.entry}, testlib)
    shim = (_CPP_SHIM.replace("@STDIN@", stdin_file)
            .replace("@ARGS@", "".join(f"{_c_string(a)}, " for a in args))
            .replace("@REPORT_MAX@", str(REPORT_MAX))
            .replace("@GENERATOR@", "true" if judge.kind == Kind.TESTLIB_GENERATOR else "false")
            .replace("@REPLY@", REPLY_MAGIC))
    return "cpp", f'{shim}#line 1 "{judge.entry}"\n{body}\n'


def _c_string(text: str) -> str:
    return '"' + "".join(c if c.isalnum() or c in " ._-+/=:," else f"\\x{ord(c):02x}\"\"" for c in text) + '"'


def request(case: Case) -> bytes:
    parts = [SHIM_MAGIC]
    for body in (case.input, case.output, case.answer):
        parts += [str(len(body)).encode() + b"\n", body]
    return b"".join(parts)


def parse_reply(stdout: bytes) -> tuple[str, int, dict[str, bytes]] | None:
    """("exit"|"signal", number, {stream: bytes}) from the shim's report; None if malformed."""
    first, sep, rest = stdout.partition(b"\n")
    if first.decode("utf-8", "replace") != REPLY_MAGIC or not sep:
        return None
    parts: dict[str, bytes] = {}
    status: tuple[str, int] | None = None
    pos = 0
    while pos < len(rest):
        eol = rest.find(b"\n", pos)
        if eol < 0:
            return None
        name, _, size_text = rest[pos:eol].decode("utf-8", "replace").rpartition(" ")
        try:
            size = int(size_text)
        except ValueError:
            return None
        body = rest[eol + 1:eol + 1 + size]
        pos = eol + 1 + size
        if status is None:
            how, _, number = name.partition(" ")
            if how not in ("exit", "signal") or not number.isdigit():
                return None
            status = (how, int(number))
        else:
            parts[name] = body
    if status is None:
        return None
    return status[0], status[1], parts


def judge_limits() -> Limits:
    """A judge's limits: the checker settings, at least Kattis' 10 s... of CPU and 1 GB."""
    try:
        from django.conf import settings

        time_s = settings.HARDTESTS_CHECKER_TIME_S
        memory_mb = settings.HARDTESTS_CHECKER_MEMORY_MB
    except ImportError:  # pragma: no cover
        time_s, memory_mb = 10.0, 1024
    return Limits(time_s=time_s, memory_mb=memory_mb, output_kb=4 * REPORT_MAX // 1024 + 64)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def read_outcome(judge: ExternalJudge, run: RunResult) -> Outcome:
    """The verdict a judge's run gives, by its format's exit codes; every other end is a failure."""
    name = "checker" if judge.kind == Kind.TESTLIB_CHECKER else str(judge.kind).replace("_", " ")
    if run.verdict != Verdict.OK:
        what = {Verdict.TLE: "exceeded its time limit", Verdict.MLE: "exceeded its memory limit",
                Verdict.OLE: "wrote too much", Verdict.CE: "did not compile", Verdict.SE: "could not run (sandbox error)",
                Verdict.RE: "crashed"}.get(run.verdict, str(run.verdict))
        tail = run.stderr.strip()[-2000:]
        return Outcome(failed=True, message=f"the {name} {what}" + (f": {tail}" if tail else ""), time_ms=run.time_ms)
    reply = parse_reply(run.stdout)
    if reply is None:
        return Outcome(failed=True, message=f"the {name}'s shim gave no report: {run.stderr.strip()[-500:]}",
                       time_ms=run.time_ms)
    how, number, parts = reply
    stderr = _text(parts.get("stderr", b""))
    feedback = {key: _text(parts[key]) for key in ("judgemessage.txt", "teammessage.txt") if parts.get(key)}
    message = (feedback.get("judgemessage.txt") or stderr).strip()
    outcome = Outcome(exit_code=number if how == "exit" else None, feedback=feedback, time_ms=run.time_ms,
                      message=message[-4000:])
    if how == "signal":
        outcome.failed = True
        outcome.message = f"the {name} was killed by signal {number}" + (f": {message}" if message else "")
        return outcome
    verdict = _exit_verdict(judge.kind, number)
    if verdict is None and judge.kind == Kind.TESTLIB_CHECKER and number == POINTS_EXIT:
        outcome.failed = True
        outcome.message = "the checker gave points (a scoring checker): pass/fail judging cannot use it" + (
            f": {message}" if message else "")
        return outcome
    if verdict is None:
        outcome.failed = True
        meaning = "FAIL" if judge.kind in (Kind.TESTLIB_CHECKER, Kind.TESTLIB_VALIDATOR) and number == 3 else \
            f"exit code {number}"
        outcome.message = f"the {name} failed ({meaning})" + (f": {message}" if message else "")
        return outcome
    outcome.verdict = verdict
    return outcome


def _exit_verdict(kind: Kind, code: int) -> str | None:
    if kind == Kind.TESTLIB_CHECKER:
        # testlib: 0 ok, 1 wrong answer, 2 presentation error, 4 "dirt" and 8 unexpected EOF are
        # reported as presentation errors; 3 FAIL and the rest (points, partial) are not verdicts here
        return {0: "AC", 1: "WA", 2: "PE", 4: "PE", 8: "PE"}.get(code)
    if kind == Kind.KATTIS_OUTPUT_VALIDATOR:
        return {42: "AC", 43: "WA"}.get(code)
    if kind == Kind.TESTLIB_VALIDATOR:
        # testlib's ensure/quitf exit 3 on an invalid input; any exit but 0 rejects it
        return "AC" if code == 0 else "WA"
    if kind == Kind.KATTIS_INPUT_VALIDATOR:
        # 42 valid; problemtools treats every other exit code as a rejection (43, a failed assert)
        return "AC" if code == 42 else "WA"
    return None


def run_judge(sb: Sandbox, judge: ExternalJudge, cases: Sequence[Case], limits: Limits | None = None) -> list[Outcome]:
    """Judge each case with `judge` (compiled once, through the compile cache); one Outcome per case.
    A judge that cannot be built fails every case with the reason (a compile error included)."""
    if not cases:
        return []
    try:
        language, source = shim_source(judge)
    except JudgeUnavailable as exc:
        return [Outcome(failed=True, message=str(exc)) for _ in cases]
    prog = judge_compile(sb, language, source)
    if not prog.ok:
        message = compile_failure(f"the {judge.kind}", prog)
        return [Outcome(failed=True, message=message) for _ in cases]
    runs = sb.run(prog, [request(case) for case in cases], limits or judge_limits())
    return [read_outcome(judge, run) for run in runs]


def judge_from_dir(kind: Kind, folder: Path, *, flags: Sequence[str] = (), entry: str | None = None) -> ExternalJudge:
    """A judge from a folder of sources (a package's output_validator/ or a single file's folder):
    its language from the entry's suffix; every text file below it is kept."""
    files: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                files[str(path.relative_to(folder))] = path.read_text(encoding="utf-8", errors="surrogateescape")
            except OSError:
                continue
    main = entry or pick_entry(files)
    return ExternalJudge(kind=kind, language=language_of(main), entry=main, files=tuple(sorted(files.items())),
                         flags=tuple(flags))


CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")


def language_of(name: str) -> str:
    suffix = Path(name).suffix
    if suffix in CPP_SUFFIXES:
        return "cpp"
    if suffix == ".py":
        return "python3"
    if suffix == ".c":
        return "c"
    return suffix.lstrip(".") or "unknown"


def pick_entry(files: dict[str, str]) -> str:
    """The file that defines main: the only source, else the one with a main function."""
    sources = [name for name in files if language_of(name) in ("cpp", "python3", "c")]
    if len(sources) == 1:
        return sources[0]
    with_main = [name for name in sources if re.search(r"\bmain\s*\(", files[name])
                 or "__main__" in files[name]]
    if with_main:
        return sorted(with_main, key=lambda n: (n.count("/"), n))[0]
    return sorted(sources)[0] if sources else (sorted(files)[0] if files else "")


@dataclass
class Generated:
    output: bytes | None
    error: str = ""


def run_generator(sb: Sandbox, generator: ExternalJudge, argvs: Sequence[list[str]],
                  limits: Limits | None = None) -> list[Generated]:
    """One test per argv from a testlib generator (`gen args > $`), compiled once; a generator
    that fails, crashes or runs out of time gives no test, with the reason."""
    if not argvs:
        return []
    try:
        language, source = shim_source(generator)
    except JudgeUnavailable as exc:
        return [Generated(None, str(exc)) for _ in argvs]
    prog = judge_compile(sb, language, source)
    if not prog.ok:
        return [Generated(None, f"the generator did not compile: {prog.message.strip()[-2000:]}") for _ in argvs]
    requests = [request(Case("\0".join(argv).encode())) for argv in argvs]
    runs = sb.run(prog, requests, limits or Limits(time_s=10.0, memory_mb=1024, output_kb=256 * 1024))
    out: list[Generated] = []
    for run in runs:
        reply = parse_reply(run.stdout) if run.verdict == Verdict.OK else None
        if reply is None:
            out.append(Generated(None, f"the generator's run ended {run.verdict}: {run.stderr.strip()[-500:]}"))
            continue
        how, number, parts = reply
        if how != "exit" or number != 0:
            message = _text(parts.get("stderr", b"")).strip()[-500:]
            out.append(Generated(None, f"the generator ended with {how} {number}: {message}"))
            continue
        out.append(Generated(parts.get("generated", b"")))
    return out
