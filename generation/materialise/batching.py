"""Many calls of one untrusted function in one sandboxed process, each with its own CPU limit.

A fresh process per call (sandbox.call_python) costs tens of milliseconds of interpreter
start-up and namespace set-up, which dominated materialisation: 60 inputs meant 60
processes for the validator alone. Here the calls of one function share a process, yet
each call still has its own limit: a CPU-time interval timer (ITIMER_PROF, the same clock
as the sandbox's limit) interrupts a call that runs too long, and an exception costs only
the call that raised it. When the batch process itself dies (a loop in C code that the
timer cannot interrupt, memory, a crash, output too large), the calls are made again one
process per call, exactly as before, so a bad call never costs more than its own calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from generation.materialise.reproducible import call_python_fixed as call_python
from generation.materialise.types import SandboxClock
from sandbox import CallResult, Limits, Sandbox, Verdict

ENTRY = "_hardtests_call_many"
# Appended after the untrusted code, so it runs in the sandbox in the same module.
_WRAPPER = '''


def _hardtests_call_many(_name, _args_list, _per_call_s, _probe, _seeds=None):
    import json as _json
    import signal as _signal
    import traceback as _traceback

    class _CallTimeout(BaseException):
        pass

    def _alarm(signum, frame):
        raise _CallTimeout()

    _fn = globals().get(_name)
    if not callable(_fn):
        return [{"ok": False, "error": "no function named %r in the code" % _name}] * len(_args_list)
    _signal.signal(_signal.SIGPROF, _alarm)
    _out = []
    for _index, _args in enumerate(_args_list):
        if _probe and _index >= _probe and all(r.get("tle") for r in _out[:_probe]):
            _out.append({"ok": False, "tle": True, "error": "not called: the first calls exceeded the time limit"})
            continue
        try:
            # Validators and judges get a fixed seed too: a randomised check answers the same every time.
            _hardtests_seed(_seeds[_index] if _seeds is not None else 0)
            _signal.setitimer(_signal.ITIMER_PROF, _per_call_s)
            try:
                _value = _fn(*_args)
            finally:
                _signal.setitimer(_signal.ITIMER_PROF, 0)
            _json.dumps(_value, allow_nan=False)
            _out.append({"ok": True, "value": _value})
        except _CallTimeout:
            _out.append({"ok": False, "tle": True, "error": "time limit exceeded"})
        except BaseException as _exc:
            _line = "".join(_traceback.format_exception_only(type(_exc), _exc)).strip().splitlines()[-1]
            _out.append({"ok": False, "error": _line})
    return _out
'''
# Reproducible generator calls: the `random` module (and numpy's, when the code imported it)
# is seeded before each call, and the seed is the module global SEED, so a generator can make
# its own random.Random(SEED). Appended like the wrapper, after the untrusted code.
_SEEDING = '''


def _hardtests_seed(_seed):
    import random as _random
    import sys as _sys

    globals()["SEED"] = _seed
    _random.seed(_seed)
    _np = _sys.modules.get("numpy")
    if _np is not None:
        _np.random.seed(_seed % (2 ** 32))


def _hardtests_seeded_call(_name, _seed):
    _hardtests_seed(_seed)
    return globals()[_name]()
'''
SEEDED_ENTRY = "_hardtests_seeded_call"
BATCH_CAP_S = 120.0


def _per_call(sb: Sandbox, code: str, function: str, args_list: Sequence[tuple[Any, ...]], limits: Limits,
              clock: SandboxClock, probe: int, shift_clock: bool = False) -> list[CallResult]:
    if probe and len(args_list) > probe:
        first = call_python(sb, code, function, args_list[:probe], limits, shift_clock=shift_clock)
        clock.add(first)
        if all(r.verdict == Verdict.TLE for r in first):
            skipped = CallResult(ok=False, error="not called: the first calls exceeded the time limit",
                                 verdict=Verdict.TLE)
            return first + [skipped] * (len(args_list) - probe)
        rest = call_python(sb, code, function, args_list[probe:], limits, shift_clock=shift_clock)
        clock.add(rest)
        return first + rest
    results = call_python(sb, code, function, args_list, limits, shift_clock=shift_clock)
    clock.add(results)
    return results


def call_many(sb: Sandbox, code: str, function: str, args_list: Sequence[tuple[Any, ...]], limits: Limits,
              clock: SandboxClock, *, probe: int = 0, seeds: Sequence[int] | None = None,
              shift_clock: bool = False) -> list[CallResult]:
    """`function(*args)` for each args, in the sandbox, each call within `limits.time_s` of CPU.

    With probe=k, when the first k calls all exceed the limit the others are not made. With
    seeds (zero-argument generators only), call i runs after seeding with seeds[i]. With
    shift_clock, the process's clock reads later (the second run of the twice-run check).
    """
    if not args_list:
        return []
    code = code + _SEEDING
    if seeds is not None:
        seeds = [int(x) for x in seeds]
    batch_limits = replace(limits, time_s=min(BATCH_CAP_S, limits.time_s * len(args_list) + 1.0),
                           output_kb=max(limits.output_kb, 256 * 1024), wall_s=None)
    batch = call_python(sb, code + _WRAPPER, ENTRY,
                        [(function, [list(a) for a in args_list], limits.time_s, probe, seeds)], batch_limits,
                        shift_clock=shift_clock)[0]
    values = batch.value if batch.ok else None
    if not isinstance(values, list) or len(values) != len(args_list) or not all(isinstance(v, dict) for v in values):
        # The process died (or the code broke the wrapper): fall back to one process per call.
        if seeds is not None:
            return _per_call(sb, code, SEEDED_ENTRY, [(function, seed) for seed in seeds], limits, clock, probe,
                             shift_clock)
        return _per_call(sb, code, function, args_list, limits, clock, probe, shift_clock)
    results = [
        CallResult(ok=bool(v.get("ok")), value=v.get("value"), error=v.get("error"),
                   verdict=Verdict.TLE if v.get("tle") else Verdict.OK)
        for v in values
    ]
    # One process: its CPU time is shared out evenly, for the bench's sum of sandbox time.
    share = batch.time_ms // len(results)
    for result in results:
        result.time_ms = share
    clock.add([batch])
    return results
