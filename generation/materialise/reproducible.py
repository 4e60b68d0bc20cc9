"""Every program the pipeline runs is reproducible by construction: a fixed hash seed and a fixed seed.

Python's string hashing is salted per process (the sandbox starts `python3 -I`, which ignores
PYTHONHASHSEED), so a generator that iterates over a set of strings, or an oracle printing
the keys of a dict of sets, gives other output in another batch. The sandbox's environment is
not ours to set, so a Python program the pipeline runs starts with a few lines that re-execute
the interpreter once with PYTHONHASHSEED=0 (the same isolation but for -E: the environment is
exactly the one given here) before reading any input; then `random` is seeded. C++ has no such
salt (std::hash and rand() are fixed by default) and neither has Java's String.hashCode, so
compiled oracles run unchanged.

What still varies (a generator seeding its own RNG from the clock, os.urandom or object ids) is
caught by running a sample of calls twice (generation.materialise.inputs), the second time with the
clock moved on (CLOCK_SHIFT), so that even a seed from the date or the whole second differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
# Prepended (after PRELUDE) to the second run of the twice-run check: the wall clock and the calendar read
# 400 days, 7 hours and 13 s later, so a generator seeded from the time differs even at a coarse
# resolution (int(time.time()), date.today()), while one measuring elapsed time is unaffected. Anything
# that fails here leaves the clock as it is: the check must never flag a generator for our error.
CLOCK_SHIFT_S = 400 * 86400 + 7 * 3600 + 13
CLOCK_SHIFT = f'''try:
    import time as _hts_t, datetime as _hts_dt
    _hts_s = {CLOCK_SHIFT_S}
    _hts_time, _hts_ns = _hts_t.time, _hts_t.time_ns
    _hts_t.time = lambda: _hts_time() + _hts_s
    _hts_t.time_ns = lambda: _hts_ns() + _hts_s * 10**9
    for _hts_name in ("monotonic", "perf_counter"):
        for _hts_suffix, _hts_add in (("", _hts_s), ("_ns", _hts_s * 10**9)):
            _hts_f = getattr(_hts_t, _hts_name + _hts_suffix)
            setattr(_hts_t, _hts_name + _hts_suffix, lambda _f=_hts_f, _a=_hts_add: _f() + _a)
    for _hts_name in ("localtime", "gmtime", "ctime"):
        _hts_f = getattr(_hts_t, _hts_name)
        setattr(_hts_t, _hts_name, lambda secs=None, _f=_hts_f: _f(_hts_t.time() if secs is None else secs))
    _hts_sf = _hts_t.strftime
    _hts_t.strftime = lambda fmt, t=None: _hts_sf(fmt, _hts_t.localtime() if t is None else t)

    class _HtsDatetime(_hts_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(_hts_t.time(), tz)

        @classmethod
        def utcnow(cls):
            return cls.now(_hts_dt.timezone.utc).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return cls.fromtimestamp(_hts_t.time())

    class _HtsDate(_hts_dt.date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(_hts_t.time())

    _hts_dt.datetime, _hts_dt.date = _HtsDatetime, _HtsDate
except Exception:
    pass
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


def call_python_fixed(sb: Sandbox, code: str, function: str, args_list: Sequence[tuple[Any, ...] | list[Any]],
                      limits: Limits, *, shift_clock: bool = False) -> list[CallResult]:
    """sandbox.call_python with the fixed hash seed: a fresh sandboxed process per args tuple; with
    `shift_clock`, the clock of the twice-run check (CLOCK_SHIFT)."""
    return call_python(sb, code, function, args_list, limits, prelude=PRELUDE + (CLOCK_SHIFT if shift_clock else ""))
