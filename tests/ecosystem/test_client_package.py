"""The client stands alone: ``pip install ./hardtests_client`` in an empty virtualenv brings
httpx and nothing of the server, and the reward functions import and work there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

SERVER_ONLY = {"django", "rq", "pyarrow", "redis", "django-ninja", "numpy", "psycopg", "gunicorn", "boto3"}

CHECK = """
import json, sys
import httpx
import hardtests_client, hardtests_client.verl, hardtests_client.openrlhf_reward_func
from hardtests_client import HardTestsClient, extract_code

def handle(request):
    items = json.loads(request.content)["items"]
    if any(i["problem"] == "nope" for i in items):
        bad = [n for n, i in enumerate(items) if i["problem"] == "nope"][0]
        return httpx.Response(404, json={"detail": f"items[{bad}]: no problem 'nope'", "code": "not_found"})
    result = {"reward": 1, "verdict": "AC", "passed": 1, "total": 1, "pass_fraction": 1.0}
    return httpx.Response(200, json={"job_id": "x" * 32, "status": "finished",
                                     "items": [{"index": n, "status": "finished", "result": result}
                                               for n, _ in enumerate(items)]})

client = HardTestsClient("http://hub", "t", transport=httpx.MockTransport(handle))
scores = client.score_completions(["p", "nope", "p"], ["```python\\nprint(1)\\n```<|im_end|>"] * 3, on_error="none")
print(json.dumps({"file": hardtests_client.__file__, "scores": scores,
                  "code": extract_code("```py\\r\\nprint(1)\\r\\n```</s>").code,
                  "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("django", "rq", "pyarrow"))}))
"""


def test_pip_install_of_the_client_pulls_no_server_package(tmp_path: Path):
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(uv).exists():
        pytest.skip("uv is not installed (it is a dev dependency: pip install -e .[dev])")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv), "--python", sys.executable], check=True, cwd=tmp_path)
    # The caller's environment (proxy, certificates, uv cache), pointed at the new venv.
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    install = subprocess.run([uv, "pip", "install", "-q", str(REPO / "hardtests_client")], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)
    if install.returncode != 0 and ("connect" in install.stderr.lower() or "network" in install.stderr.lower()):
        pytest.skip(f"no package index reachable: {install.stderr[-300:]}")
    assert install.returncode == 0, install.stderr
    listed = subprocess.run([uv, "pip", "list", "--format", "json"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "hardtests-client" in names and "httpx" in names
    assert not names & SERVER_ONLY, names & SERVER_ONLY
    assert len(names) <= 12, names  # httpx and its few dependencies
    # From outside the repository, so the installed copy is the one imported.
    run = subprocess.run([str(venv / "bin" / "python"), "-c", CHECK], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["file"].startswith(str(venv)) and out["modules"] == []
    assert out["scores"] == [1.0, None, 1.0] and out["code"] == "print(1)\n"
    # Building it wrote nothing into the source folder.
    assert sorted(p.name for p in (REPO / "hardtests_client").iterdir() if p.name != "__pycache__") == [
        "__init__.py", "client.py", "core.py", "errors.py", "extract.py", "openrlhf_reward_func.py",
        "pyproject.toml", "verl.py"]
