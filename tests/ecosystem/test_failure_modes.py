"""docs/rl-clients.md says what each client does when the server cannot judge; these are the
facts it rests on, read from the installed libraries' own code (verl 0.9.1's built-in reward and
reward managers, sandbox-fusion 0.3.7's client), so a new release that changes them fails here.
The behaviour itself, against a server whose sandbox cannot start, is test_infrastructure.py.
OpenRLHF needs torch, Ray and vLLM and is not installed: its rows cite v0.11.0's source."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

DOC = (REPO / "docs" / "rl-clients.md").read_text()


def _row(client: str) -> str:
    found = [line for line in DOC.splitlines() if line.startswith(f"| {client}")]
    assert len(found) == 1, f"docs/rl-clients.md has no single table row for {client!r}"
    return found[0]


def test_verls_builtin_counts_a_failed_request_as_a_failed_test(verl_sandbox_fusion: ModuleType) -> None:
    utils = verl_sandbox_fusion.utils
    source = inspect.getsource(utils.call_sandbox_api)
    # retries only a 504, 3 tries, 1 s then 2 s apart; reads for compile + run timeout + 10 s
    assert (utils.MAX_RETRIES, utils.INITIAL_RETRY_DELAY, utils.API_TIMEOUT) == (3, 1, 10)
    assert "response.status_code == 504" in source and "INITIAL_RETRY_DELAY * (attempt + 1)" in source
    assert "compile_timeout + run_timeout + API_TIMEOUT" in source
    case = inspect.getsource(utils._process_single_case)
    assert 'metadata["status"] = "api_error"' in case and 'metadata["status"] = "sandbox_error"' in case
    row = _row("verl 0.9.1 built-in")
    assert "retries only a 504 (3 tries, 1 s then 2 s apart)" in row and "**failed test**" in row
    assert "compile_timeout + run_timeout + 10" in row


def test_verls_reward_managers_let_our_error_stop_the_step(verl_sandbox_fusion: ModuleType) -> None:
    root = Path(verl_sandbox_fusion.__file__).parents[3]
    loop = (root / "experimental/reward_loop/reward_manager/naive.py").read_text()
    assert "compute_score(" in loop and not re.search(r"^\s*except\b", loop, re.M)
    # the legacy manager catches only its own opt-in timeout (SIGALRM), which it scores 0.0
    legacy = (root / "workers/reward_manager/naive.py").read_text()
    assert re.findall(r"^\s*except\b.*$", legacy, re.M) == ["    except ValueError:", "            except TimeoutError:"]
    assert "compute_score_timeout=None" in legacy and "score = 0.0" in legacy
    row = _row("ours")
    assert "the training step stops" in row and "`compute_score_timeout`" in row


def test_sandbox_fusion_raises_and_submit_safe_scores_a_failure_as_rejected() -> None:
    client = pytest.importorskip("sandbox_fusion.client")
    assert inspect.signature(client.run_code).parameters["max_attempts"].default == 5
    assert inspect.signature(client.submit).parameters["max_attempts"].default == 5
    safe = inspect.getsource(client.submit_safe)
    assert "except Exception" in safe and "accepted=False" in safe
    assert "raises the last error" in _row("sandbox-fusion 0.3.7 `run_code`")
    assert "do not use for rewards" in _row("sandbox-fusion 0.3.7 `submit_safe`")


def test_openrlhfs_rows_say_none_and_info_not_raise() -> None:
    for row in (_row("OpenRLHF 0.11 `--reward.remote_url http"), _row("OpenRLHF 0.11 `--reward.remote_url /")):
        assert "None" in row or "as above" in row
    http = _row("OpenRLHF 0.11 `--reward.remote_url http")
    assert "5 times, 1 s apart" in http and "**INFO**" in http and "nothing raises" in http
    assert "the clients below raise" not in DOC
