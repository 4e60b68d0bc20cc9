"""`python -m hardtests_web.ops.healthcheck`: exit 0 when a checked worker of this host beats
and can judge, 1 (with the reason on stderr) otherwise. The worker containers' healthcheck.

The worker publishes its record from a thread of its own, even while a job runs
(hardtests_web/ops/worker.py), so a long job does not make it look unhealthy; a worker that
hangs, lost Redis, or cannot read the database or the storage does.
"""

from __future__ import annotations

import os
import socket
import sys


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    import django

    django.setup()
    from core.queues import WORKER_HEALTH_HASH, redis_connection, redis_now, worker_health_parse

    host = socket.gethostname()
    try:
        connection = redis_connection()
        with connection.pipeline(transaction=False) as pipe:
            pipe.hgetall(WORKER_HEALTH_HASH)
            pipe.time()
            published, now = pipe.execute()
    except Exception as exc:
        print(f"redis: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    names = [key.decode() for key in published]
    mine = {name: record for name, record in worker_health_parse(published, names, redis_now(now)).items()
            if record.get("hostname") == host}
    if not mine:
        print(f"no worker on {host} has beaten recently", file=sys.stderr)
        return 1
    sick = {name: record for name, record in mine.items() if not record.get("ok")}
    if len(sick) == len(mine):
        print("; ".join(p for record in sick.values() for p in record.get("problems", [])) or "cannot judge",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
