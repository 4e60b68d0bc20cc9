"""/healthz (cheap, for load balancers) and /healthz/deep (staff or HARDTESTS_HEALTH_TOKEN).

The deep page says what an operator needs when verifications fail: can this node reach the
database, Redis and the test storage (a write-read-delete probe and a read of a stored
body), which workers listen on each queue with their last heartbeat and whether they can
judge, how long each queue is, and when the janitor last ran. It answers 503 and names
every failing part in `problems` when any is broken. The database, Redis and storage probes
are django-health-check's.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from typing import Any, cast

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from health_check.checks import Database, Storage
from health_check.contrib.redis import Redis as RedisCheck
from redis.asyncio import Redis as AsyncRedis
from rq.worker import Worker

from core.queues import redis_connection
from core.storage import storage_describe
from hardtests_web.ops.checks import storage_read_check
from hardtests_web.ops.janitor import janitor_last_run

# Queues whose work the API needs done: without a worker able to judge, verifications fail.
REQUIRED_QUEUES = ("api",)


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def _allowed(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_staff:
        return True
    token = settings.HARDTESTS_HEALTH_TOKEN
    if not token:
        return False
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


async def _library_checks() -> dict[str, str | None]:
    checks = {
        "database": Database(),
        "redis": RedisCheck(client_factory=lambda: AsyncRedis.from_url(
            settings.REDIS_URL, socket_connect_timeout=3, socket_timeout=5)),
        "storage_write": Storage(),
    }
    results = await asyncio.gather(*(check.get_result() for check in checks.values()))
    out: dict[str, str | None] = {}
    for name, result in zip(checks, results, strict=True):
        error = result.error
        if error is not None and name == "storage_write":
            cause = error.__cause__ or error.__context__
            detail = f"{type(cause).__name__}: {cause}" if cause else str(error)
            out[name] = f"storage {storage_describe(settings.HARDTESTS_STORAGE_URL)}: {detail}"[:500]
        else:
            out[name] = None if error is None else f"{name}: {error}"[:500]
    return out


def _workers_and_queues(now: float) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    from core.queues import (
        WORKER_HEALTH_HASH,
        get_queue,
        redis_connection,
        redis_now,
        worker_health_parse,
        workers_dead,
    )

    connection = redis_connection()
    workers: dict[str, list[dict[str, Any]]] = {}
    lengths: dict[str, int] = {}
    problems: list[str] = []
    with connection.pipeline(transaction=False) as pipe:
        pipe.hgetall(WORKER_HEALTH_HASH)
        pipe.time()
        published, redis_time = pipe.execute()
    for name in settings.RQ_QUEUE_NAMES:
        queue = get_queue(name)
        lengths[name] = queue.count
        listed = Worker.all(queue=queue, connection=connection)
        names = [w.name for w in listed]
        health = worker_health_parse(published, names, redis_now(redis_time))
        dead = set(workers_dead(published, names, redis_now(redis_time)))
        if dead:
            problems.append(f"workers: {len(dead)} dead on the {name} queue (no beat for over "
                            f"{settings.HARDTESTS_WORKER_DEAD_S:g} s): {', '.join(sorted(dead))}"[:800])
        rows = []
        for worker in listed:
            beat = worker.last_heartbeat.timestamp() if worker.last_heartbeat else None
            own = health.get(worker.name)
            rows.append({
                "name": worker.name,
                "hostname": worker.hostname,
                "state": worker.get_state(),
                "alive": worker.name not in dead,
                "last_heartbeat_age_s": None if beat is None else round(now - beat, 1),
                # None: a worker that does not check itself (a plain rqworker).
                "can_judge": None if own is None else bool(own.get("ok")),
                "problems": [] if own is None else own.get("problems", []),
            })
        workers[name] = rows
        if name in REQUIRED_QUEUES:
            if not [row for row in rows if row["alive"]]:
                problems.append(f"workers: none alive listens on the {name} queue")
            elif all(row["can_judge"] is False for row in rows if row["alive"]):
                reasons = sorted({p for row in rows for p in row["problems"]})
                problems.append(f"workers: none on the {name} queue can judge ({'; '.join(reasons)})"[:800])
    return workers, lengths, problems


def janitor_grace_s() -> float:
    """How long a janitor may go without a recorded pass before it counts as dead: one full
    pass period and one fast period (a pass is recorded at the end of each)."""
    return settings.HARDTESTS_JANITOR_PERIOD_S + settings.HARDTESTS_JANITOR_FAST_S


def _janitor(now: float) -> tuple[dict[str, Any] | None, list[str]]:
    """The janitor's last pass and what is wrong with it. Its record lives in Redis, so a
    restarted Redis has none: "no pass recorded yet" is not an alarm until Redis has been up
    longer than the grace of one pass; then the janitor is dead (or not started). A pass that
    could not reach the database is reported as such, not as a healthy janitor."""
    grace = janitor_grace_s()
    last = janitor_last_run()
    if last is None:
        server = cast(dict[str, Any], redis_connection().info("server"))
        up_s = float(server.get("uptime_in_seconds", 0))
        if up_s <= grace:
            return {"recorded": False, "redis_uptime_s": up_s, "grace_s": grace}, []
        return None, [f"janitor: no pass recorded in the {up_s:.0f} s since Redis started "
                      "(is `manage.py janitor` running?)"]
    age = now - float(last["at"])
    info = {**last, "age_s": round(age, 1)}
    problems = []
    if age > grace:
        problems.append(f"janitor: last pass {age:.0f} s ago (is `manage.py janitor` running?)")
    database = (last.get("errors") or {}).get("database")
    if database:
        problems.append(f"janitor cannot reach the database: {database}"[:500])
    return info, problems


@never_cache
def healthz_deep(request: HttpRequest) -> JsonResponse:
    if not _allowed(request):
        return JsonResponse({"ok": False, "detail": "staff login or the health token is required"}, status=403)
    now = time.time()
    checks = asyncio.run(_library_checks())
    checks["storage_read"] = None if checks["database"] else storage_read_check()
    problems = [error for error in checks.values() if error]
    body: dict[str, Any] = {
        "storage": storage_describe(settings.HARDTESTS_STORAGE_URL),
        "checks": {name: {"ok": error is None, "error": error} for name, error in checks.items()},
    }
    if checks["redis"] is None:
        try:
            body["workers"], body["queues"], worker_problems = _workers_and_queues(now)
            body["janitor"], janitor_problems = _janitor(now)
            problems += worker_problems + janitor_problems
        except Exception as exc:
            problems.append(f"redis: {type(exc).__name__}: {exc}"[:500])
    body["problems"] = problems
    body["ok"] = not problems
    return JsonResponse(body, status=200 if not problems else 503)
