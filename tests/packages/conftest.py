"""Fixtures of real external packages (../shared/fixtures): skipped with the reason when absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import Sandbox, SandboxUnavailable, get_sandbox

SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
TESTLIB = SHARED / "testlib"
KATTIS = SHARED / "kattis-examples"


@pytest.fixture(scope="session")
def testlib_dir() -> Path:
    if not (TESTLIB / "testlib.h").is_file():
        pytest.skip(f"the testlib fixture is absent ({TESTLIB}): these tests need real testlib checkers")
    return TESTLIB


@pytest.fixture(scope="session")
def kattis_dir() -> Path:
    if not (KATTIS / "hello" / "problem.yaml").is_file():
        pytest.skip(f"the Kattis examples fixture is absent ({KATTIS}): these tests need real packages")
    return KATTIS


@pytest.fixture(scope="session")
def sb() -> Sandbox:
    try:
        return get_sandbox("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap sandbox unavailable: {exc}")
