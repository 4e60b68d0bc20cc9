"""Real shared services for the multi-node tests, each private to the test and on 127.0.0.1:
a PostgreSQL cluster, a Redis server on TCP with a password, and moto's S3-compatible server."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.deploy.conftest import free_port

_spec = importlib.util.spec_from_file_location("with_postgres", REPO / "scripts" / "with_postgres.py")
assert _spec and _spec.loader
with_postgres = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(with_postgres)


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A throwaway cluster; yields its DATABASE_URL (skips without PostgreSQL binaries)."""
    initdb, pg_ctl = with_postgres.find_bin("initdb"), with_postgres.find_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    run_as: list[str] = []
    workdir = tempfile.mkdtemp(prefix="hardtests-pg-")
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
            owner = pwd.getpwnam("postgres")
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, port = os.path.join(workdir, "data"), free_port()
    subprocess.run([*run_as, initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"],
                   check=True, stdout=subprocess.DEVNULL)
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {workdir} -c fsync=off -c full_page_writes=off"
    subprocess.run([*run_as, pg_ctl, "-D", data, "-o", options, "-l", os.path.join(workdir, "log"), "-w", "start"],
                   check=True, stdout=subprocess.DEVNULL)
    try:
        createdb = with_postgres.find_bin("createdb")
        assert createdb, "createdb is missing next to initdb"
        subprocess.run([createdb, "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "hardtests"], check=True)
        yield f"postgres://postgres@127.0.0.1:{port}/hardtests"
    finally:
        subprocess.run([*run_as, pg_ctl, "-D", data, "-m", "immediate", "stop"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def redis_tcp(password: str) -> Iterator[str]:
    """redis-server on a TCP port with a password; yields its REDIS_URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    port, workdir = free_port(), tempfile.mkdtemp(prefix="hardtests-redis-")
    child = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--requirepass", password,
                              "--save", "", "--appendonly", "no", "--dir", workdir],
                             stdout=subprocess.DEVNULL, start_new_session=True)
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    import redis

    deadline = time.monotonic() + 20
    while True:
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.RedisError:
            if time.monotonic() > deadline or child.poll() is not None:
                child.kill()
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    try:
        yield url
    finally:
        child.terminate()
        child.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


class MotoS3:
    """moto's server mode on 127.0.0.1: an S3-compatible endpoint that can be stopped and started."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.child: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkdtemp(prefix="hardtests-moto-")) / "moto.log"

    def start(self) -> None:
        binary = Path(sys.executable).with_name("moto_server")
        if not binary.exists():
            pytest.skip("moto[server] is not installed (pip install 'moto[server]')")
        self.child = subprocess.Popen([str(binary), "-H", "127.0.0.1", "-p", str(self.port)],
                                      stdout=self.log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
        import urllib.request

        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.child.poll() is not None:
                    raise RuntimeError(f"moto_server did not start: {self.log.read_text()[-2000:]}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.terminate()
            self.child.wait(timeout=15)

    def close(self) -> None:
        """Stop for good: the server and its log's folder."""
        self.stop()
        shutil.rmtree(self.log.parent, ignore_errors=True)

    def client(self):  # noqa: ANN201 - a boto3 client
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")


class PostgresCluster:
    """A throwaway PostgreSQL cluster that can be stopped and started again on its port."""

    def __init__(self) -> None:
        self.initdb, self.pg_ctl = with_postgres.find_bin("initdb"), with_postgres.find_bin("pg_ctl")
        if not self.initdb or not self.pg_ctl:
            pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
        self.run_as: list[str] = []
        self.workdir = tempfile.mkdtemp(prefix="hardtests-pg-")
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
                owner = pwd.getpwnam("postgres")
            os.chown(self.workdir, owner.pw_uid, owner.pw_gid)
            self.run_as = ["runuser", "-u", "postgres", "--"]
        self.data, self.port = os.path.join(self.workdir, "data"), free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/hardtests"

    def __enter__(self) -> PostgresCluster:
        subprocess.run([*self.run_as, self.initdb, "-D", self.data, "-U", "postgres", "-A", "trust", "--no-sync",
                        "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
        self.start()
        createdb = with_postgres.find_bin("createdb")
        assert createdb, "createdb is missing next to initdb"
        subprocess.run([createdb, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "hardtests"], check=True)
        return self

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.workdir} -c fsync=off -c full_page_writes=off"
        subprocess.run([*self.run_as, self.pg_ctl, "-D", self.data, "-o", options, "-l",
                        os.path.join(self.workdir, "log"), "-w", "start"], check=True, stdout=subprocess.DEVNULL)

    def stop(self) -> None:
        subprocess.run([*self.run_as, self.pg_ctl, "-D", self.data, "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


class RedisServer:
    """redis-server on a TCP port with a password, that can be killed and started again."""

    def __init__(self, password: str) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.skip("redis-server is not installed")
        self.port, self.workdir = free_port(), tempfile.mkdtemp(prefix="hardtests-redis-")
        self.password = password
        self.url = f"redis://:{password}@127.0.0.1:{self.port}/0"
        self.child: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        # The password in a config file, not on the command line (where `ps` shows it).
        conf = Path(self.workdir) / "redis.conf"
        conf.write_text(f"port {self.port}\nbind 127.0.0.1\nrequirepass {self.password}\nsave \"\"\n"
                        f"appendonly no\ndir {self.workdir}\n")
        self.child = subprocess.Popen([self.binary, str(conf)], stdout=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline or self.child.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)

    def kill(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait(timeout=10)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)
