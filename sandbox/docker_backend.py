"""Docker backend: one container per batch, the same hts-runner inside as pid 1.

The guarantees match the bubblewrap backend's:

* Results travel over the container's attached stdout (a pipe to the engine),
  never through a file: the program has no descriptor for it and no path to it.
* The runner stays root (with only the capabilities it needs: switch uid,
  signal, reach its own files); each test's program runs under another uid
  with no capability at all (``hts-dock drop``), so it cannot signal, trace or
  read the runner.
* Only the current test's input is visible (a link made just before the test),
  and the runner's output files live in a root-only directory.
* Every test starts clean: the runner kills every process left after a test,
  and before each program starts ``hts-dock drop`` removes SysV IPC objects,
  POSIX queues and the files in /tmp and /dev/shm.  Keyrings are out of reach
  (seccomp), abstract sockets die with their processes.
* CPU and memory come from a cgroup the worker creates as the container's
  cgroup parent and binds in: the program of each test joins its child ``prog``,
  whose memory limit is the problem's (the runner, charged to the container,
  has room of its own above it), and whose counters the runner resets per test:
  the memory peak is the cgroup's (every process of the test), less the file
  cache it brought in.
* Scheduling: every process of the container (runner and programs) is in the
  container's CPU cgroup, whose weight the engine sets (the default: one nice-0
  task's) and no program can reach (read-only /sys, root-only cgroup binds).  A
  task outside the root CPU cgroup is not scheduled by its session's autogroup, so
  /proc/self/autogroup moves nothing; the runner's filter makes setpriority and the
  sched_* calls no-ops, and the runner measures starvation per test, as on
  bubblewrap (runner.c, sample_test).  hardtests-docker weighs one default per CPU,
  so that one container per CPU weighs as one nice-0 session each.
* The seccomp filter of `seccomp_policy`, no network, no new privileges, a
  read-only root.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import logging
import os
import resource
import shutil
import socket
import struct
import tarfile
import time
import uuid
from pathlib import Path
from typing import Any

from . import cache, cgroups, languages, seccomp_policy
from .base import MB, Batch, BatchSpec, RawResult, Sandbox
from .bwrap import BIN_DIR, ETC_PIECES, IN_DIR, IO_DIR, AnswerStream, read_result, runner_options
from .types import SandboxUnavailable

DOCK_DIR = "/.hts-dock"
# bound from a host directory that only root may enter: the current input, the
# runner's output files and the cgroup counters
PRIV_DIR = "/.hts-priv"
# what the runner needs beyond an unprivileged user: switch to the program's uid,
# kill the program's leftovers, and reach directories owned by the worker's uid
CAPABILITIES = ["SETUID", "SETGID", "KILL", "DAC_OVERRIDE", "FOWNER"]
CGROUP_BASE = "hardtests-docker"
V1_ROOT = Path("/sys/fs/cgroup")
# the runner and its helper, charged to the batch cgroup too
RUNNER_MEMORY = 16 * MB

def _nproc_rlimit() -> int:
    """As high as the engine (which runs beside us, with our limits) will let a container start with."""
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    return 1 << 20 if hard == resource.RLIM_INFINITY else min(hard, 1 << 20)


def empty_image_tar() -> bytes:
    """A root filesystem with only mount points; /usr and friends are bound read-only at run time."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("tmp", "proc", "dev", "sys", "etc", "usr", "build", *(p.strip("/") for p in
                     (IO_DIR, IN_DIR, BIN_DIR, DOCK_DIR, languages.PROG_DIR, languages.PCH_DIR))):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if name == "tmp" else 0o755
            tar.addfile(info)
        for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            if os.path.islink(f"/{top}"):
                info = tarfile.TarInfo(top)
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(f"/{top}")
                tar.addfile(info)
    return buffer.getvalue()


log = logging.getLogger(__name__)
# named after its content, so that a changed layout never meets an old image
IMAGE = os.environ.get("HARDTESTS_SANDBOX_DOCKER_IMAGE") or (
    "hardtests-sandbox:" + hashlib.sha256(empty_image_tar()).hexdigest()[:12])


def _set_option(options: list[str], flag: str, value: str) -> list[str]:
    options = list(options)
    if flag in options:
        options[options.index(flag) + 1] = value
    else:
        options += [flag, value]
    return options


class AttachStream(AnswerStream):
    """The runner's stdout, demultiplexed from the engine's attach stream; stderr is kept aside."""

    framed = True

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock.fileno())
        self.sock = sock
        self.raw = bytearray()
        self.err = bytearray()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _recv(self) -> bytes:
        return self.sock.recv(1 << 20)

    def _take(self, chunk: bytes) -> None:
        self.raw += chunk
        while len(self.raw) >= 8:
            kind, size = struct.unpack(">BxxxL", self.raw[:8])
            if len(self.raw) < 8 + size:
                break
            (self.out if kind == 1 else self.err).extend(self.raw[8:8 + size])
            del self.raw[:8 + size]


class BatchCgroupParent:
    """The container's cgroup parent: limits set here, counters bound into the container.

    Docker would put its own limits on the container's cgroup, but that cgroup is
    mounted read-only inside, so the runner could not reset its counters per test.
    Only this cgroup's child (the container) lives here, so its counters are the
    container's.
    """

    def __init__(self, version: str, memory_bytes: int, pids: int = 0) -> None:
        """`memory_bytes` (and `pids`, 0 none) bound the program's cgroup `prog`; the batch
        cgroup around it and the container has RUNNER_MEMORY more for the runner."""
        self.version = version
        self.name = f"{CGROUP_BASE}/d-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs: dict[str, Path] = {}
        try:
            if version == "v1":
                for controller in ("memory", "cpuacct", "pids"):
                    path = V1_ROOT / controller / self.name
                    path.mkdir(parents=True)
                    self.dirs[controller] = path
                    (path / "prog").mkdir()
                for mem, limit in ((self.dirs["memory"], memory_bytes + RUNNER_MEMORY),
                                   (self.dirs["memory"] / "prog", memory_bytes)):
                    (mem / "memory.limit_in_bytes").write_text(str(limit))
                    with contextlib.suppress(OSError):
                        # no swap either, so the limit is real memory
                        (mem / "memory.memsw.limit_in_bytes").write_text(str(limit))
                    with contextlib.suppress(OSError):
                        (mem / "memory.swappiness").write_text("0")
                if pids > 0:
                    (self.dirs["pids"] / "prog" / "pids.max").write_text(str(pids))
                cpu_base = V1_ROOT / "cpu" / CGROUP_BASE
                if (V1_ROOT / "cpu" / "cpu.shares").exists():
                    # the engine makes the container's CPU cgroup below it (see the docstring)
                    cpu_base.mkdir(exist_ok=True)
                    _weigh_base(cpu_base, "cpu.shares", cgroups.V1_SHARES, 262144)
            else:
                root = cgroups.v2_own_dir()
                if root is None:
                    raise OSError(errno.ENOENT, "no cgroup v2 hierarchy")
                while root.parent != root and (root.parent / "cgroup.procs").exists():
                    root = root.parent  # the engine's cgroupfs driver names paths from the root
                base = root / CGROUP_BASE
                base.mkdir(exist_ok=True)
                for parent in (root, base):
                    for controller in ("memory", "pids", "cpu"):
                        with contextlib.suppress(OSError):
                            (parent / "cgroup.subtree_control").write_text(f"+{controller}")
                _weigh_base(base, "cpu.weight", cgroups.V2_WEIGHT, 10000)
                path = root / self.name
                path.mkdir()
                self.dirs["unified"] = path
                for controller in ("memory", "pids", "cpu"):
                    with contextlib.suppress(OSError):
                        (path / "cgroup.subtree_control").write_text(f"+{controller}")
                (path / "prog").mkdir()
                for where, limit in ((path, memory_bytes + RUNNER_MEMORY), (path / "prog", memory_bytes)):
                    (where / "memory.max").write_text(str(limit))
                    with contextlib.suppress(OSError):
                        (where / "memory.swap.max").write_text("0")
                if pids > 0:
                    with contextlib.suppress(OSError):
                        (path / "prog" / "pids.max").write_text(str(pids))
        except OSError:
            self.close()
            raise

    def volumes(self) -> dict[str, dict[str, str]]:
        if self.version == "v1":
            return {str(path): {"bind": f"{PRIV_DIR}/cg/{controller}", "mode": "rw"}
                    for controller, path in self.dirs.items()}
        return {str(self.dirs["unified"]): {"bind": f"{PRIV_DIR}/cg", "mode": "rw"}}

    def holds(self, container_id: str) -> bool:
        """Whether the engine really put the container below us (it may see another hierarchy)."""
        return all(any(child.is_dir() and container_id in child.name for child in path.iterdir())
                   for path in self.dirs.values())

    def close(self) -> None:
        # the engine makes our path in every hierarchy it uses, and removes only its own cgroup
        paths = list(self.dirs.values())
        if self.version == "v1":
            paths += [root / self.name for root in V1_ROOT.iterdir() if root.name not in self.dirs]
        for path in paths:
            for _ in range(100):
                with contextlib.suppress(OSError):
                    for child in path.iterdir():
                        if child.is_dir():
                            child.rmdir()  # the container's own cgroup, if the engine left it
                try:
                    path.rmdir()
                    break
                except (FileNotFoundError, NotADirectoryError):
                    break
                except OSError:
                    time.sleep(0.02)
        self.dirs.clear()


def _weigh_base(path: Path, name: str, default: int, most: int) -> None:
    with contextlib.suppress(OSError):
        (path / name).write_text(str(min(most, default * max(1, os.cpu_count() or 1))))


def _sweep_stale_cgroups() -> None:
    """Batch cgroups of workers that died without closing their batches (empty ones only)."""
    for path in V1_ROOT.glob(f"*/{CGROUP_BASE}/d-*"):
        pid = path.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            for child in [*path.glob("*/"), path]:
                with contextlib.suppress(OSError):
                    child.rmdir()


class DockerBatch(Batch):
    def __init__(self, sandbox: DockerSandbox, spec: BatchSpec) -> None:
        self.sandbox = sandbox
        self.spec = spec
        self.container_id: str | None = None
        self.stream: AttachStream | None = None
        self.cgroup: BatchCgroupParent | None = None
        # disk-backed (program output is page cache, not memory) and for root only: the
        # runner is root in the container, the program is not
        self.private = cache.make_private_dir(cache.neutral_root())
        self.views: list[Path] = []
        self.private.chmod(0o700)
        (self.private / "in").mkdir()
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        spec = self.spec
        version = self.sandbox.cgroup_version
        memory = spec.memory_bytes() + RUNNER_MEMORY
        if version != "none":
            try:
                self.cgroup = BatchCgroupParent(version, spec.memory_bytes(), spec.nproc() + 8)
            except OSError as exc:
                raise SandboxUnavailable(f"cannot create the batch cgroup for Docker: {exc}") from None
        uid = cache.sandbox_uid() or os.geteuid()
        if uid == 0:
            raise SandboxUnavailable("the Docker backend cannot run programs as root")
        options = runner_options(spec, cgroup=self.cgroup is not None)
        options = _set_option(options, "-o", f"{PRIV_DIR}/io")
        # the pids limit of the container bounds processes; an rlimit would count every
        # process of this uid on the host (no user namespace), other sandboxes included
        nproc = _nproc_rlimit()
        options = _set_option(options, "-p", str(nproc))
        dock = f"{DOCK_DIR}/hts-dock"
        argv = [dock, "init", version, f"{PRIV_DIR}/cg", f"{PRIV_DIR}/io", f"{BIN_DIR}/hts-runner", "-N",
                *options, "--", dock, "drop", str(uid), str(uid), *spec.argv]
        volumes: dict[str, dict[str, str]] = {
            str(self.sandbox.runner_dir): {"bind": BIN_DIR, "mode": "ro"},  # views: see cache.neutral_root
            str(self.sandbox.dock_dir): {"bind": DOCK_DIR, "mode": "ro"},
            str(self.private): {"bind": PRIV_DIR, "mode": "rw"},
        }
        for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.isdir(top) and not os.path.islink(top):
                volumes[top] = {"bind": top, "mode": "ro"}
        for piece in ETC_PIECES:
            if os.path.exists(piece):
                volumes[piece] = {"bind": piece, "mode": "ro"}
        if spec.prog_dir is not None:
            self.views.append(cache.batch_view(spec.prog_dir))
            volumes[str(self.views[-1])] = {"bind": languages.PROG_DIR, "mode": "ro"}
        if spec.pch_dir is not None:
            volumes[str(cache.tool_view(spec.pch_dir))] = {"bind": languages.PCH_DIR, "mode": "ro"}
        if spec.build_dir is not None:
            volumes[str(spec.build_dir)] = {"bind": languages.BUILD_DIR, "mode": "rw"}
        limits: dict[str, Any] = {}
        if self.cgroup is not None:
            volumes.update(self.cgroup.volumes())
            limits["cgroup_parent"] = "/" + self.cgroup.name
            if version == "v2":
                # the program's cgroup is a sibling of the container's, which a private
                # cgroup namespace would not let the runner move it into
                limits["cgroupns"] = "host"
        else:
            # rusage only: the engine's own limit, with room for the runner
            limits["mem_limit"] = limits["memswap_limit"] = memory + 48 * MB
        # A worker kept to some CPUs (taskset, a cpuset) keeps its containers there too, as a
        # bubblewrap sandbox inherits its worker's affinity: the engine places a container in its
        # own cpuset cgroup, which would give it every CPU again.
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) < (os.cpu_count() or len(allowed)):
            limits["cpuset_cpus"] = ",".join(map(str, allowed))
        scratch = f"size={spec.limits.memory_mb * MB},mode=1777"
        # an empty /dev/pts replaces the engine's devpts: no pseudo-terminal to block a read on
        devices = {"/tmp": scratch, "/dev/pts": "size=64k,mode=755"}
        api = self.sandbox.client.api
        host_config = api.create_host_config(
            binds=volumes, tmpfs=devices, network_mode="none", read_only=True, ipc_mode="private",
            pids_limit=spec.nproc() + 8, cap_drop=["ALL"], cap_add=CAPABILITIES,
            security_opt=["no-new-privileges", seccomp_policy.docker_security_opt()],
            shm_size=spec.limits.memory_mb * MB, auto_remove=True, ulimits=[{"Name": "nproc", "Soft": nproc, "Hard": nproc}],
            **limits,
        )
        config = api.create_container_config(
            IMAGE, argv, user="0:0", hostname="sandbox", working_dir="/", environment={},
            labels={"hardtests-sandbox": "1"}, stdin_open=True, tty=False, host_config=host_config,
        )
        # stdin closes when our attach does, so the runner (and the container) ends with a dead worker
        config["StdinOnce"] = True
        self.container_id = api.create_container_from_config(config)["Id"]
        attached = api.attach_socket(self.container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        raw = getattr(attached, "_sock", attached)
        self._attached = attached  # keeps the response (and so the socket) alive
        self.stream = AttachStream(raw)
        api.start(self.container_id)
        if self.cgroup is not None and not self.cgroup.holds(self.container_id):
            raise SandboxUnavailable(
                "the Docker engine did not place the container in the batch cgroup (does it see the same "
                "cgroup hierarchy as this worker?); set HARDTESTS_SANDBOX_CGROUPS=0 for rusage only"
            )

    def _runner_error(self, what: str) -> SandboxUnavailable:
        detail = ""
        if self.stream is not None:
            detail = self.stream.err.decode("utf-8", "replace").strip()[-2000:]
        return SandboxUnavailable(f"{what}: {detail or 'no message'}")

    def _feed(self, index: int) -> str:
        """Only this test's input is visible to it: a fresh link, named after nothing."""
        current = self.private / "in" / "cur"
        with contextlib.suppress(FileNotFoundError):
            current.unlink()
        source = self.spec.inputs_dir / str(index)
        try:
            os.link(source, current)
        except OSError:
            shutil.copyfile(source, current)
        return f"{PRIV_DIR}/in/cur"

    def run(self, index: int) -> RawResult:
        assert self.stream is not None
        target = "-" if index < 0 else self._feed(index)
        try:
            self.stream.send(f"R {target}\n".encode())
        except OSError:
            raise self._runner_error("the sandbox runner in the container exited") from None
        # the runner enforces the wall clock itself; this only guards against a wedged runner
        self.stream.deadline = time.monotonic() + self.spec.wall_us() / 1e6 + 30
        try:
            result = read_result(self.stream)  # type: ignore[arg-type]
        except TimeoutError:
            raise SandboxUnavailable("the sandbox runner in the container stopped answering") from None
        except (OSError, ValueError):
            result = None
        if result is None:
            raise self._runner_error("the sandbox runner in the container failed")
        if os.WIFEXITED(result.status) and os.WEXITSTATUS(result.status) == 2 \
                and result.stderr.startswith((b"hts-dock: ", b"hts-runner: ")):
            # the runner or its helper failed before the program started
            raise SandboxUnavailable(result.stderr.decode("utf-8", "replace").strip())
        return result

    def close(self) -> None:
        if self.container_id is not None:
            with contextlib.suppress(Exception):
                self.sandbox.client.api.remove_container(self.container_id, force=True)
            self.container_id = None
        if self.stream is not None:
            with contextlib.suppress(OSError):
                self.stream.sock.close()
            with contextlib.suppress(Exception):
                self._attached.close()
            self.stream = None
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None
        shutil.rmtree(self.private, ignore_errors=True)
        for view in self.views:
            shutil.rmtree(view, ignore_errors=True)
        self.views = []


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
            info = self.client.info()
        except Exception as exc:  # the SDK raises several unrelated types for "no engine"
            raise SandboxUnavailable(
                f"no Docker engine answers ({exc}): apt-get install docker.io and start dockerd"
            ) from None
        self.runner_dir: Path = cache.tool_view(cache.runner_dir())
        self.dock_dir: Path = cache.tool_view(cache.tool_dir(Path(__file__).with_name("docker_init.c"), "hts-dock",
                                                                 ("wipe_tree.h",)))
        self.cgroup_version = self._cgroup_version(info)
        if self.cgroup_version == "v1":
            _sweep_stale_cgroups()
        ensure_image(self.client)

    @staticmethod
    def _cgroup_version(info: dict[str, Any]) -> str:
        """v1/v2 when the engine's cgroups are ones this worker can create and bind; else none (rusage)."""
        if cgroups.accounting().version == "none" or os.geteuid() != 0:
            return "none"
        if info.get("CgroupDriver") != "cgroupfs":
            log.warning("the Docker engine uses the %s cgroup driver: Docker's memory limit and rusage only "
                        "(start dockerd with --exec-opt native.cgroupdriver=cgroupfs)", info.get("CgroupDriver"))
            return "none"  # the systemd driver only takes slices as parents
        version = "v2" if str(info.get("CgroupVersion")) == "2" else "v1"
        try:
            BatchCgroupParent(version, 64 * MB).close()
        except OSError as exc:
            log.warning("cannot create batch cgroups for Docker (%s): Docker's memory limit and rusage only", exc)
            return "none"
        return version

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
