"""Docker backend: one container per batch, the same hts-runner inside as pid 1.

The container has no network, a read-only root, no capabilities, memory and
pids limits and tmpfs scratch.  The runner runs in its "flat" mode: as pid 1
of the container it kills every other process and wipes /tmp after each test.
Results are exchanged through a bound directory, so a batch runs all its
inputs in one container; a borderline test that is re-run gets a new one.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path
from typing import Any

from . import cache, languages
from .base import MB, Batch, BatchSpec, RawResult, Sandbox
from .bwrap import BIN_DIR, ETC_PIECES, IN_DIR, IO_DIR, read_result, runner_options
from .types import SandboxUnavailable

IMAGE = os.environ.get("HARDTESTS_SANDBOX_DOCKER_IMAGE", "hardtests-sandbox:latest")
OUT_DIR = "/.hts-out"


def empty_image_tar() -> bytes:
    """A root filesystem with only mount points; /usr and friends are bound read-only at run time."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("tmp", "proc", "dev", "sys", "etc", "usr", "build", *(p.strip("/") for p in
                     (IO_DIR, IN_DIR, BIN_DIR, OUT_DIR, languages.PROG_DIR, languages.PCH_DIR))):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if name in ("tmp", IO_DIR.strip("/")) else 0o755
            tar.addfile(info)
        for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            if os.path.islink(f"/{top}"):
                info = tarfile.TarInfo(top)
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(f"/{top}")
                tar.addfile(info)
    return buffer.getvalue()


class DockerBatch(Batch):
    def __init__(self, sandbox: DockerSandbox, spec: BatchSpec) -> None:
        self.sandbox = sandbox
        self.spec = spec
        self.results: dict[int, RawResult] = {}
        self.ran_all = False

    def _indices(self) -> list[int]:
        return sorted(int(name) for name in os.listdir(self.spec.inputs_dir) if name.isdigit())

    def run(self, index: int) -> RawResult:
        if index in self.results and self.ran_all:
            # a second run of the same test (the borderline re-run) gets a container of its own
            return self._run_container([index])[index]
        if index not in self.results:
            batch = [index] if index < 0 else self._indices()
            self.results.update(self._run_container(batch))
            self.ran_all = True
        return self.results[index]

    def _run_container(self, indices: list[int]) -> dict[int, RawResult]:
        spec = self.spec
        out_dir = cache.make_private_dir(writable_by_sandbox=True)
        try:
            commands = "".join(f"R {'-' if i < 0 else f'{IN_DIR}/{i}'}\n" for i in indices)
            (out_dir / "commands").write_text(commands)
            argv = [f"{BIN_DIR}/hts-runner", "-N", *runner_options(spec, cgroup=False),
                    "-I", f"{OUT_DIR}/commands", "-R", f"{OUT_DIR}/results", "--", *spec.argv]
            volumes: dict[str, dict[str, str]] = {
                "/usr": {"bind": "/usr", "mode": "ro"},
                str(self.sandbox.runner_dir): {"bind": BIN_DIR, "mode": "ro"},
                str(spec.inputs_dir): {"bind": IN_DIR, "mode": "ro"},
                str(out_dir): {"bind": OUT_DIR, "mode": "rw"},
            }
            for piece in ETC_PIECES:
                if os.path.exists(piece):
                    volumes[piece] = {"bind": piece, "mode": "ro"}
            if spec.prog_dir is not None:
                volumes[str(spec.prog_dir)] = {"bind": languages.PROG_DIR, "mode": "ro"}
            if spec.pch_dir is not None:
                volumes[str(spec.pch_dir)] = {"bind": languages.PCH_DIR, "mode": "ro"}
            if spec.build_dir is not None:
                volumes[str(spec.build_dir)] = {"bind": languages.BUILD_DIR, "mode": "rw"}
            mem = spec.memory_bytes() + 64 * MB
            scratch = f"size={spec.limits.memory_mb * MB},mode=1777"
            uid = cache.sandbox_uid() or os.geteuid()
            container = self.sandbox.client.containers.create(
                IMAGE, argv, user=f"{uid}:{uid}", network_mode="none", read_only=True,
                volumes=volumes, tmpfs={"/tmp": scratch, IO_DIR: scratch}, working_dir="/",
                mem_limit=mem, memswap_limit=mem, pids_limit=spec.nproc() + 4, cap_drop=["ALL"],
                security_opt=["no-new-privileges"], environment={}, shm_size=spec.limits.memory_mb * MB,
                labels={"hardtests-sandbox": "1"}, detach=True,
            )
            try:
                container.start()
                total = len(indices) * (spec.wall_us() / 1e6 + 1) + 60
                status = container.wait(timeout=total)
                results: dict[int, RawResult] = {}
                path = out_dir / "results"
                with open(path, "rb") if path.exists() else io.BytesIO() as stream:
                    for index in indices:
                        result = read_result(stream)
                        if result is None:
                            break
                        results[index] = result
                if len(results) != len(indices):
                    logs = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")[-2000:]
                    raise SandboxUnavailable(f"the runner in the container failed ({status}): {logs}")
                return results
            finally:
                container.remove(force=True)
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)

    def close(self) -> None:
        self.results.clear()


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(self) -> None:
        try:
            import docker  # noqa: PLC0415 - optional dependency, only this backend needs it
        except ImportError:
            raise SandboxUnavailable("the Docker SDK for Python is not installed: pip install docker") from None
        try:
            self.client: Any = docker.from_env(timeout=120)
            self.client.ping()
        except Exception as exc:  # the SDK raises several unrelated types for "no engine"
            raise SandboxUnavailable(
                f"no Docker engine answers ({exc}): apt-get install docker.io and start dockerd"
            ) from None
        self.runner_dir: Path = cache.runner_dir()
        ensure_image(self.client)

    def open_batch(self, spec: BatchSpec) -> Batch:
        return DockerBatch(self, spec)


def ensure_image(client: Any) -> None:
    """No registry is needed: the image is an empty root imported from a tarball."""
    import docker.errors  # noqa: PLC0415

    try:
        client.images.get(IMAGE)
        return
    except docker.errors.ImageNotFound:
        pass
    repository, _, tag = IMAGE.partition(":")
    client.api.import_image_from_data(empty_image_tar(), repository=repository, tag=tag or "latest")
    client.images.get(IMAGE)
