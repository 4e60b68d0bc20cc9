"""Oracle-free suites: problems with no human solution (HardTests A.7, and AceCoder's baseline).

`execute` is what generation.pipeline calls for a run whose mode is in MODES; `build` makes
the tests without saving them (the Table 8 evaluation uses it with the oracles hidden).
See docs/oracle-free.md.
"""

from __future__ import annotations

from generation.models import GenerationRun
from generation.oracle_free.common import Built, save_suite
from generation.recorder import RunRecorder
from generation.selectors import has_usable_oracle
from problems.models import TestSuite
from sandbox import Sandbox

MODES = GenerationRun.ORACLE_FREE_MODES

__all__ = ["MODES", "Built", "build", "execute", "has_usable_oracle"]


def build(run: GenerationRun, rec: RunRecorder, sb: Sandbox, *, persist: bool = True) -> Built:
    """The run's oracle-free tests, unsaved; persist=False also leaves the kit unsaved (evaluations)."""
    from generation.oracle_free.a7 import build_a7
    from generation.oracle_free.acecoder import build_acecoder

    if run.mode == GenerationRun.Mode.ACECODER:
        return build_acecoder(run, rec, sb)
    return build_a7(run, rec, sb, persist=persist)


def execute(run: GenerationRun, rec: RunRecorder, sb: Sandbox) -> TestSuite:
    """Build and activate an oracle-free suite; failures raise as in the pipeline (RunFailed, MaterialiseError)."""
    built = build(run, rec, sb)
    suite = save_suite(run, rec, built)
    rec.log(f"suite v{suite.version} active (origin oracle_free, {built.trust.get('method')}): {suite.test_count} "
            f"tests {suite.counts_by_kind}; outputs are model-made, see its trust record")
    return suite
