"""Fixtures of the ecosystem tests: the real clients (sandbox-fusion, verl's reward module,
OpenRLHF-shaped requests, our hardtests_client) against a live server, real RQ workers
and the real sandbox."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rq.worker import Worker

from core.queues import verification_queue
from tests.api.conftest import _clean_redis, ab_problem, sandbox_worker, user  # noqa: F401  (fixtures)
from tests.conftest import REPO, process_group_stop, worker_env

# The programs every client is tried with, on the A+B problem of tests/api (4 tests, 1 s).
ACCEPTED = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"
SLOW = "while True:\n    pass\n"
CPP_BROKEN = "int main( {\n"


def fenced(code: str, label: str = "python") -> str:
    return f"Here is my solution.\n\n```{label}\n{code}```\n\nIt reads two numbers."


@pytest.fixture
def url_tokens(settings: Any) -> None:
    settings.HARDTESTS_API_URL_TOKENS = True


@pytest.fixture
def token(user: Any) -> str:  # noqa: F811
    from api.tokens import token_create

    return token_create(user=user, name="ecosystem").secret


def _verl_root() -> Path:
    """The installed verl package's folder. verl_loader may have put a bare module object (no
    __spec__, which find_spec refuses) in sys.modules for an earlier test of this process."""
    loaded = sys.modules.get("verl")
    if loaded is not None and getattr(loaded, "__path__", None):
        return Path(next(iter(loaded.__path__)))
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("verl is not installed (scripts/bootstrap.sh installs it with --no-deps)")
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="session")
def verl_sandbox_fusion() -> ModuleType:
    """verl's verl.utils.reward_score.sandbox_fusion, loaded on its own: importing the verl
    package pulls in Ray and torch, this reward module needs only requests."""
    folder = _verl_root() / "utils" / "reward_score" / "sandbox_fusion"
    module_spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules["verl_sandbox_fusion"] = module
    module_spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def broken_sandbox_worker(django_db_setup: None, django_db_blocker: Any,
                          tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """A real worker whose sandbox cannot start (an unknown backend): every job it takes is an
    infrastructure failure, as on a machine that lost bubblewrap."""
    with django_db_blocker.unblock():
        env = {**worker_env(), "HARDTESTS_SANDBOX_BACKEND": "missing-backend"}
    queue = verification_queue()
    log = tmp_path_factory.mktemp("broken") / "rqworker.log"
    child = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "rqworker", "api"], env=env, cwd=REPO,
                             stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    # By pid: the worker of an earlier module may still be leaving the registry.
    while not any(str(w.pid) == str(child.pid) for w in Worker.all(queue=queue)):
        if child.poll() is not None or time.monotonic() > deadline:
            process_group_stop(child, graceful=False)
            raise RuntimeError(f"rqworker did not start: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    yield child
    process_group_stop(child)


@pytest.fixture(scope="session")
def verl_loader() -> Any:
    """verl's own loader of reward functions: ``get_custom_reward_fn`` and the two wrappers it
    puts around a function (verl/trainer/ppo/reward.py of the pinned verl), and verl's
    ``load_module`` (``pkg://`` and file paths). That module imports Ray and torch, which
    this environment does not have, so its three functions are taken from its source as
    they are; the ``verl`` and ``verl.utils`` packages are bare module objects over the
    real folders so that verl.utils.import_utils and verl.utils.reward_score import from
    the installed files without verl/__init__.py."""
    import ast
    import inspect
    import types
    from functools import partial

    root = _verl_root()
    try:
        import verl.utils.import_utils  # noqa: F401  (a full verl install: use it as it is)
    except ImportError:
        for name, folder in (("verl", root), ("verl.utils", root / "utils")):
            sys.modules.pop(name, None)
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]
            sys.modules[name] = package
    from verl.utils.import_utils import load_extern_object

    source = (root / "trainer" / "ppo" / "reward.py").read_text()
    wanted = {"_call_with_kwargs", "_call_with_kwargs_async", "get_custom_reward_fn"}
    nodes = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
             and n.name in wanted]
    assert {n.name for n in nodes} == wanted, "verl's reward.py changed: read it again"
    namespace: dict[str, Any] = {"inspect": inspect, "partial": partial, "Optional": Any, "DictConfig": Any,
                                 "RawRewardFn": Any}
    exec(compile(ast.Module(body=nodes, type_ignores=[]), str(root / "trainer/ppo/reward.py"), "exec"), namespace)
    # verl >= 0.5 imports load_extern_object inside get_custom_reward_fn; older ones at the top.
    namespace.setdefault("load_extern_object", load_extern_object)
    return namespace["get_custom_reward_fn"]
