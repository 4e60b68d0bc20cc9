"""Every program the pipeline runs is reproducible by construction: a fixed hash seed and a fixed seed.

Python's string hashing is salted per process (the sandbox starts `python3 -I`, which ignores
PYTHONHASHSEED), so a generator that iterates over a set of strings, or an oracle printing
the keys of a dict of sets, gives other output in another batch. The sandbox's environment is
not ours to set, so a Python program the pipeline runs starts with a few lines that re-execute
the interpreter once with PYTHONHASHSEED=0 (the same isolation but for -E: the environment is
exactly the one given here) before reading any input; then `random` is seeded. C++ has no such
salt (std::hash and rand() are fixed by default) and neither has Java's String.hashCode, so
compiled oracles run unchanged.

What still varies (a generator seeding its own RNG from the clock) is caught by running a
sample of calls twice (generation.materialise.inputs).
"""

from __future__ import annotations

from collections.abc import Sequence

from problems.models import Solution
from sandbox import CallResult, CompiledProgram, Limits, Sandbox
from sandbox.pycall import call_python

HASH_SEED = 0
ORACLE_SEED = 20240611
# Runs before anything else in the file; a failed exec (a backend refusing it) leaves the
# program running with a salted hash, which the twice-run check then reports.
PRELUDE = f'''import os as _hts_os, sys as _hts_sys
if _hts_sys.flags.hash_randomization:
    try:
        _hts_os.execve(_hts_sys.executable, [_hts_sys.executable, "-s", "-P", _hts_sys.argv[0]],
                       {{"PYTHONHASHSEED": "{HASH_SEED}", "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
                        "LANG": "C.UTF-8", "TMPDIR": "/tmp"}})
    except OSError:
        pass
del _hts_os, _hts_sys
'''
# An oracle's own file is run unchanged in the module's namespace after the prelude, with
# `random` already seeded, so that a randomised oracle gives the same output every time.
_ORACLE_RUNNER = '''
import random as _hts_random
_hts_random.seed({seed})
del _hts_random
exec(compile(globals().pop("_HTS_SOURCE"), __file__, "exec"), globals())
'''


def oracle_source(code: str, seed: int = ORACLE_SEED) -> str:
    """A Python oracle wrapped to run with the fixed hash seed and a seeded `random`."""
    return PRELUDE + f"_HTS_SOURCE = {code!r}\n" + _ORACLE_RUNNER.format(seed=int(seed))


def compile_oracle(sb: Sandbox, solution: Solution) -> CompiledProgram:
    """Compile an oracle as the pipeline runs it. A Python oracle is syntax-checked as written first,
    so that a broken one is still "does not compile" rather than a runtime error on every input."""
    prog = sb.compile(solution.language, solution.code)
    if not prog.ok or solution.language != "python3":
        return prog
    return sb.compile("python3", oracle_source(solution.code))


def call_python_fixed(sb: Sandbox, code: str, function: str, args_list: Sequence[tuple | list],
                      limits: Limits) -> list[CallResult]:
    """sandbox.call_python with the fixed hash seed: a fresh sandboxed process per args tuple."""
    return call_python(sb, code, function, args_list, limits, prelude=PRELUDE)
