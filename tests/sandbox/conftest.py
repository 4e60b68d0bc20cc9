"""Fixtures for the sandbox tests: the real bubblewrap sandbox, and a real Docker engine.

The Docker engine is started here when none answers and we are root (installing
docker.io first if needed), with its state in a temporary directory, and stopped
at the end of the session; otherwise the docker tests are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sandbox import Limits, RunResult, Sandbox, SandboxUnavailable, get_sandbox

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sb() -> Sandbox:
    try:
        return get_sandbox("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap sandbox unavailable: {exc}")


def parent_pid(pid: int) -> int:
    """The parent of a process of this host, from /proc (OSError once it is gone)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def run_one(sb: Sandbox, language: str, source: str, stdin: str | bytes = "", **limits: object) -> RunResult:
    prog = sb.compile(language, source)
    assert prog.ok, prog.message
    [result] = sb.run(prog, [stdin], Limits(**limits))  # type: ignore[arg-type]
    return result


def _engine_answers(env: dict[str, str]) -> bool:
    try:
        import docker

        client = docker.DockerClient(base_url=env.get("DOCKER_HOST", "unix:///var/run/docker.sock"), timeout=5)
        client.ping()
        client.close()
        return True
    except Exception:
        return False


def _install_docker() -> None:
    """apt-get install docker.io, once even when several test processes (pytest-xdist) ask at the
    same moment: dpkg takes one installer at a time, so the others wait on a file lock."""
    import fcntl

    apt_env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with open("/tmp/hardtests-docker-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shutil.which("dockerd") is not None:
            return
        install = subprocess.run(["apt-get", "install", "-y", "docker.io"], capture_output=True, env=apt_env,
                                 timeout=600)
        if install.returncode != 0:
            # A fresh machine may have no package lists yet.
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=apt_env, timeout=600)
            install = subprocess.run(["apt-get", "install", "-y", "docker.io"], capture_output=True,
                                     env=apt_env, timeout=600)
        if install.returncode != 0:
            print(install.stderr.decode()[-2000:])


@pytest.fixture(scope="session")
def docker_sb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    started: subprocess.Popen[bytes] | None = None
    saved_host = os.environ.get("DOCKER_HOST")
    if not _engine_answers(dict(os.environ)):
        if os.geteuid() != 0:
            pytest.skip("no Docker engine answers and starting one needs root")
        if shutil.which("dockerd") is None:
            _install_docker()
        if shutil.which("dockerd") is None:
            pytest.skip("cannot install docker.io with apt-get")
        root = Path("/tmp") / f"hts-dockerd-{os.getpid()}"  # short path: unix sockets have a length limit
        root.mkdir(exist_ok=True)
        sock = f"unix://{root}/docker.sock"
        log = open(root / "dockerd.log", "wb")  # noqa: SIM115 - lives as long as the engine
        started = subprocess.Popen(
            # cgroupfs: the backend makes each batch's cgroup the container's parent (systemd takes slices only)
            ["dockerd", "--iptables=false", "--bridge=none", "--storage-driver=vfs",
             "--exec-opt", "native.cgroupdriver=cgroupfs", "--data-root",
             str(root / "data"), "--exec-root", str(root / "exec"), "--pidfile", str(root / "dockerd.pid"),
             "-H", sock],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        os.environ["DOCKER_HOST"] = sock
        deadline = time.monotonic() + 60
        while not _engine_answers(dict(os.environ)):
            if started.poll() is not None or time.monotonic() > deadline:
                started.kill()
                os.environ.pop("DOCKER_HOST")
                pytest.skip(f"dockerd did not start: {(root / 'dockerd.log').read_text()[-500:]}")
            time.sleep(0.3)
    try:
        docker_sandbox = get_sandbox("docker")
    except SandboxUnavailable as exc:
        _stop(started, saved_host)
        pytest.skip(f"docker sandbox unavailable: {exc}")
    try:
        yield docker_sandbox
    finally:
        _stop(started, saved_host)


def _stop(started: subprocess.Popen[bytes] | None, saved_host: str | None) -> None:
    if started is None:
        return
    root = Path("/tmp") / f"hts-dockerd-{os.getpid()}"
    started.terminate()
    try:
        started.wait(timeout=20)
    except subprocess.TimeoutExpired:
        started.kill()
    if saved_host is None:
        os.environ.pop("DOCKER_HOST", None)
    else:
        os.environ["DOCKER_HOST"] = saved_host
    shutil.rmtree(root, ignore_errors=True)


@contextmanager
def mounted_tmpfs(options: str, prefix: str) -> Iterator[Path]:
    """A tmpfs of its own (mount options such as "noexec,size=64m"), unmounted at the end; the
    test is skipped with the reason where mounting needs root."""
    where = Path(tempfile.mkdtemp(prefix=prefix))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"{options},mode=1777", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs ({options}) here (root needed): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        where.rmdir()


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def any_sb(request: pytest.FixtureRequest) -> Sandbox:
    """Each backend in turn: the test runs once with bubblewrap and once with Docker."""
    found: Sandbox = request.getfixturevalue("sb" if request.param == "bwrap" else "docker_sb")
    return found
