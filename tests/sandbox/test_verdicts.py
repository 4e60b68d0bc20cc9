"""Each verdict, in each language, from real programs in the real sandbox."""

from __future__ import annotations

import time

import pytest

from sandbox import Limits, Sandbox, Verdict

from .conftest import run_one

ADD = {
    "cpp": '#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}\n',
    "python3": "a, b = map(int, input().split())\nprint(a + b)\n",
    "java": "import java.util.*;\npublic class Main { public static void main(String[] x) {\n"
            "Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n",
}
LOOP = {
    "cpp": "int main(){volatile unsigned long x=0; for(;;) x++;}\n",
    "python3": "while True:\n    pass\n",
    "java": "public class Main { public static void main(String[] a) { long x = 0; while (true) x++; } }\n",
}
MEMORY_BOMB = {
    "cpp": "#include <cstdlib>\n#include <cstring>\n"
           "int main(){for(;;){char*p=(char*)malloc(1<<20); if(!p) return 3; memset(p,1,1<<20);}}\n",
    "python3": "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 20))\n",
    "java": "import java.util.*;\npublic class Main { public static void main(String[] a) {\n"
            "List<long[]> l = new ArrayList<>(); while (true) l.add(new long[1 << 17]); } }\n",
}
FLOOD = {
    "cpp": '#include <cstdio>\nint main(){for(;;) fputs("flood flood flood flood\\n", stdout);}\n',
    "python3": "import sys\nwhile True:\n    sys.stdout.write('flood flood flood flood\\n')\n",
    "java": "public class Main { public static void main(String[] a) {\n"
            "StringBuilder b = new StringBuilder(); for (int i = 0; i < 1000; i++) b.append(\"flood\\n\");\n"
            "String s = b.toString(); while (true) System.out.print(s); } }\n",
}
CRASH = {
    "cpp": "int main(){volatile int*p=nullptr; return *p;}\n",
    "python3": "raise ValueError('boom')\n",
    "java": "public class Main { public static void main(String[] a) { throw new RuntimeException(\"boom\"); } }\n",
}
SLEEP = {
    "cpp": "#include <unistd.h>\nint main(){sleep(1000);}\n",
    "python3": "import time\ntime.sleep(1000)\n",
    "java": "public class Main { public static void main(String[] a) throws Exception { Thread.sleep(1000000); } }\n",
}
LANGS = ["cpp", "python3", "java"]


@pytest.mark.parametrize("language", LANGS)
def test_correct_program_is_ok_with_measurements(sb: Sandbox, language: str) -> None:
    prog = sb.compile(language, ADD[language])
    results = sb.run(prog, ["1 2\n", "40 2\n"], Limits(time_s=2))
    assert [r.verdict for r in results] == [Verdict.OK, Verdict.OK]
    assert [r.stdout for r in results] == [b"3\n", b"42\n"]
    for r in results:
        assert r.exit_code == 0 and r.signal is None
        assert 0 <= r.time_ms < 2000 and r.wall_ms >= 0 and r.memory_kb > 0
        assert set(r.to_dict()) == {"verdict", "exit_code", "signal", "time_ms", "wall_ms", "memory_kb",
                                    "stdout", "stderr"}


@pytest.mark.parametrize("language", LANGS)
def test_infinite_loop_is_tle_on_cpu_time(sb: Sandbox, language: str) -> None:
    # a generous backstop: CPU time decides, whatever share of a CPU the loaded machine gives
    result = run_one(sb, language, LOOP[language], time_s=0.5, wall_s=60)
    assert result.verdict == Verdict.TLE
    assert result.time_ms >= 500


@pytest.mark.parametrize("language", LANGS)
def test_memory_bomb_is_mle(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, MEMORY_BOMB[language], time_s=3, memory_mb=128, wall_s=60)
    assert result.verdict == Verdict.MLE, result


@pytest.mark.parametrize("language", LANGS)
def test_output_flood_is_ole_and_capped(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, FLOOD[language], time_s=3, output_kb=256, wall_s=60)
    assert result.verdict == Verdict.OLE
    assert result.stdout_truncated and len(result.stdout) <= 256 * 1024


@pytest.mark.parametrize("language", LANGS)
def test_crash_is_re_with_stderr_tail(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, CRASH[language])
    assert result.verdict == Verdict.RE
    if language == "cpp":
        assert result.signal == 11
    else:
        assert result.exit_code == 1 and "boom" in result.stderr


def test_exit_code_is_reported(sb: Sandbox) -> None:
    result = run_one(sb, "cpp", "int main(){return 7;}\n")
    assert (result.verdict, result.exit_code, result.signal) == (Verdict.RE, 7, None)


@pytest.mark.parametrize(
    ("language", "source"),
    [("cpp", "int main( { return 0; }\n"), ("java", "public class Main { void f( }\n"),
     ("python3", "def f(:\n    pass\n")],
)
def test_compile_error_is_ce_with_compiler_message(sb: Sandbox, language: str, source: str) -> None:
    prog = sb.compile(language, source)
    assert not prog.ok and prog.verdict == Verdict.CE
    assert "error" in prog.message.lower()
    [result] = sb.run(prog, [""], Limits())
    assert result.verdict == Verdict.CE


def test_java_public_class_name_is_detected(sb: Sandbox) -> None:
    source = "public class Solution { public static void main(String[] a) { System.out.println(\"hi\"); } }\n"
    prog = sb.compile("java", source)
    assert prog.ok and prog.main_class == "Solution"
    assert sb.run(prog, [""], Limits())[0].stdout == b"hi\n"


def test_stop_on_failure_stops_after_first_failure(sb: Sandbox) -> None:
    prog = sb.compile("python3", "n = int(input())\nassert n > 0\nprint(n)\n")
    results = sb.run(prog, ["1", "0", "2"], Limits(), stop_on_failure=True)
    assert [r.verdict for r in results] == [Verdict.OK, Verdict.RE]
    assert len(sb.run(prog, ["1", "0", "2"], Limits())) == 3


def test_a_test_asked_for_ahead_is_not_run_out_after_a_stop(sb: Sandbox) -> None:
    """The next test is asked for before the last is judged; once the batch stops, that test
    is ended at once: not run to its 30 s limit, nor waited for as a runner that does not
    exit when told (5 s).  Compared with the same failure and nothing queued behind it."""
    prog = sb.compile("python3", "import time\nn = int(input())\nassert n > 0\nt = time.process_time()\n"
                                 "while time.process_time() - t < 30:\n    pass\n")
    limits = Limits(time_s=30, memory_mb=256)

    def timed(inputs: list[str]) -> float:
        started = time.monotonic()
        results = sb.run(prog, inputs, limits, stop_on_failure=True)
        assert [r.verdict for r in results] == [Verdict.RE]
        return time.monotonic() - started

    alone = min(timed(["0"]) for _ in range(2))
    queued = timed(["0", "1", "1"])
    assert queued < alone + 3, (queued, alone)


def test_a_test_asked_for_ahead_is_dropped_once_another_lane_stops_the_batch(sb: Sandbox) -> None:
    """`stop_before` (another lane failed earlier) turns true after test 1 was asked for: test 1
    is not waited for (it would burn 30 s), and the batch ends with test 0's result."""
    prog = sb.compile("python3", "import time\nn = int(input())\nt = time.process_time()\n"
                                 "while n and time.process_time() - t < 30:\n    pass\n")
    limits = Limits(time_s=30, memory_mb=256)

    def timed(inputs: list[str]) -> float:
        seen: list[int] = []
        started = time.monotonic()
        results = sb.run(prog, inputs, limits, stop_when=lambda result: seen.append(1) and False,
                         stop_before=lambda index: index >= 1 and bool(seen))
        assert [r.verdict for r in results] == [Verdict.OK]
        return time.monotonic() - started

    alone = min(timed(["0"]) for _ in range(2))
    queued = timed(["0", "1", "1"])
    assert queued < alone + 3, (queued, alone)


def test_cpp_standard_is_configurable(sb: Sandbox) -> None:
    source = "#include <bits/stdc++.h>\nint main(){ std::vector v{1,2,3}; std::cout << std::ssize(v); }\n"
    assert sb.compile("cpp", source, cpp_std="c++20").ok
    assert sb.compile("cpp", source, cpp_std="c++17").verdict == Verdict.CE


def test_python_is_the_system_interpreter_in_isolated_mode(sb: Sandbox) -> None:
    source = "import sys\nprint(sys.executable, sys.flags.isolated, sys.prefix)\n"
    result = run_one(sb, "python3", source)
    assert result.stdout.decode().split() == ["/usr/bin/python3", "1", "/usr"]


@pytest.mark.parametrize("language", LANGS)
def test_wall_clock_backstop_catches_sleeping(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, SLEEP[language], time_s=0.3)
    # idle, not starved: TLE however loaded the machine is (no SE, no re-run)
    assert result.verdict == Verdict.TLE, result
    assert 950 <= result.wall_ms < 10_000  # the default backstop is 1.5 x time + 0.5 s
    assert result.time_ms < 300
