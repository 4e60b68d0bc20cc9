#!/usr/bin/env python3
"""Run a command against a throwaway PostgreSQL server: `with_postgres.py -- CMD ...`.

Finds the PostgreSQL binaries on the machine, creates a cluster in a temporary directory
(as the `postgres` user when run as root, because postgres refuses to run as root),
listens on 127.0.0.1 on a free port, exports DATABASE_URL for CMD, and removes it all
afterwards. Without PostgreSQL binaries it prints why and exits 1: `make test` must never pass
with the PostgreSQL run quietly left out (scripts/bootstrap.sh installs the server).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: with_postgres.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    command = argv[argv.index("--") + 1 :]
    initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
    if not initdb or not pg_ctl:
        print("with_postgres: no PostgreSQL binaries (initdb, pg_ctl) on this machine; "
              "run scripts/bootstrap.sh as root (apt-get install postgresql)", file=sys.stderr)
        return 1
    run_as: list[str] = []
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
            owner = pwd.getpwnam("postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    workdir = tempfile.mkdtemp(prefix="hardtests-pg-")
    data = os.path.join(workdir, "data")
    if owner is not None:
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
    port = free_port()
    log = os.path.join(workdir, "server.log")
    try:
        subprocess.run(
            [*run_as, initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {workdir} -c fsync=off -c full_page_writes=off"
        subprocess.run([*run_as, pg_ctl, "-D", data, "-o", options, "-l", log, "-w", "start"], check=True,
                       stdout=subprocess.DEVNULL)
        env = dict(os.environ, DATABASE_URL=f"postgres://postgres@127.0.0.1:{port}/hardtests")
        print(f"PostgreSQL {subprocess.run([pg_ctl, '--version'], capture_output=True, text=True).stdout.strip()} "
              f"on 127.0.0.1:{port}")
        return subprocess.run(command, env=env).returncode
    finally:
        subprocess.run([*run_as, pg_ctl, "-D", data, "-m", "immediate", "stop"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
