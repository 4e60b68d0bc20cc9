"""The Docker backend gives the same verdicts as bubblewrap on the same programs."""

from __future__ import annotations

import pytest

from sandbox import Limits, Sandbox, Verdict

from .test_hostile import FORK_BOMB_VERDICTS

PROGRAMS = [
    ("python3", "print(sum(map(int, input().split())))\n", Limits(), Verdict.OK),
    ("cpp", "#include <bits/stdc++.h>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b;}\n", Limits(), Verdict.OK),
    ("python3", "raise SystemExit(3)\n", Limits(), Verdict.RE),
    ("cpp", "int main(){volatile unsigned long x=0; for(;;) x++;}\n", Limits(time_s=0.4), Verdict.TLE),
    ("python3", "b = []\nwhile True:\n    b.append(bytearray(1 << 20))\n", Limits(memory_mb=96), Verdict.MLE),
    ("cpp", "#include <cstdio>\nint main(){for(;;) puts(\"xxxxxxxxxxxxxxxx\");}\n", Limits(output_kb=64), Verdict.OLE),
    ("cpp", "#include <unistd.h>\nint main(){for(;;) fork();}\n", Limits(time_s=0.4, wall_s=2), Verdict.TLE),
    ("python3", "import time\ntime.sleep(100)\n", Limits(time_s=0.2, wall_s=1), Verdict.TLE),
    ("java", "public class Main { public static void main(String[] a) { System.out.println(1 + 2); } }\n",
     Limits(), Verdict.OK),
]


@pytest.mark.docker
def test_verdicts_agree_between_bubblewrap_and_docker(sb: Sandbox, docker_sb: Sandbox) -> None:
    for language, source, limits, expected in PROGRAMS:
        prog = sb.compile(language, source)
        assert prog.ok, prog.message
        [native] = sb.run(prog, ["1 2\n"], limits)
        [contained] = docker_sb.run(prog, ["1 2\n"], limits)
        assert (native.verdict, contained.verdict) == (expected, expected), (source, native, contained)
        if expected == Verdict.OK:
            assert native.stdout.strip() == contained.stdout.strip() == b"3"


@pytest.mark.docker
def test_docker_batch_isolates_tests_and_compiles(docker_sb: Sandbox) -> None:
    source = ("import os\nmode = input()\nif mode == 'leave':\n    open('/tmp/leak', 'w').write('x')\n"
              "    if os.fork() == 0:\n        os.setsid()\n        import time\n        time.sleep(100)\n"
              "    print('left')\nelse:\n    print(os.listdir('/tmp'), len([p for p in os.listdir('/proc') if p.isdigit()]))\n")
    prog = docker_sb.compile("python3", source + "# docker\n")
    assert prog.ok
    first, second = docker_sb.run(prog, ["leave", "look"], Limits())
    assert first.stdout == b"left\n"
    # only the runner (pid 1) and the program itself remain
    assert second.stdout == b"[] 2\n"
    bad = docker_sb.compile("cpp", "int main( {}\n// docker\n")
    assert bad.verdict == Verdict.CE


def _hostile_programs() -> list[tuple[str, str, str]]:
    """Every program table of the hostile suite (module-level {language: source} dicts), found by shape,
    so that an attack added there is compared here too."""
    from . import test_hostile

    found = []
    for name, value in sorted(vars(test_hostile).items()):
        if (isinstance(value, dict) and value and set(value) <= {"cpp", "python3", "java"}
                and all(isinstance(source, str) for source in value.values())):
            found += [(name, language, source) for language, source in sorted(value.items())]
    return found


# tables whose verdict is a race between limits, and the verdicts it can give
RACY = {"FORK_BOMB": FORK_BOMB_VERDICTS}
# inputs the programs of a table expect; anything else gets empty input
HOSTILE_INPUTS = {
    "CONNECT": ["1\n"],  # a closed port: BLOCKED either way
    "SNOOP": ["/etc/passwd\n/root/.bashrc\n"],
    "WRITER": ["/usr/hts-x\n/tmp/hts-x\n"],
    "LEAVER": ["leave\n", "look\n"],
    "KILLER": ["", "", ""],
}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(("table", "language", "source"), _hostile_programs(),
                         ids=[f"{t}-{lang}" for t, lang, _ in _hostile_programs()])
def test_hostile_suite_gives_the_same_verdicts_on_both_backends(
    sb: Sandbox, docker_sb: Sandbox, table: str, language: str, source: str
) -> None:
    prog = sb.compile(language, source)
    assert prog.ok, prog.message
    inputs = HOSTILE_INPUTS.get(table, [""])
    limits = Limits(time_s=1, wall_s=10, memory_mb=256)
    native = [r.verdict for r in sb.run(prog, inputs, limits)]
    contained = [r.verdict for r in docker_sb.run(prog, inputs, limits)]
    assert Verdict.SE not in native + contained
    if table in RACY:
        # each verdict must be one the race can give, on one backend as on the other
        assert set(native) | set(contained) <= RACY[table], (native, contained)
    else:
        assert native == contained
