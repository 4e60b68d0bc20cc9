"""Dead workers: found by the age of their beat, taken off RQ's lists, their job run again once.

RQ keeps a SIGKILLed worker registered until its key expires (worker_ttl, 7 minutes), counts
it as listening, and leaves the job it held "started" until that job's timeout: the API would
wait its whole timeout for an answer nobody will give, and a systemd unit restarting the worker
under the same name is refused meanwhile. A checked worker (hardtests_web/ops/worker.py) beats
every HARDTESTS_WORKER_BEAT_S; once its record has expired it is dead, and `worker_reap` clears
it: its registration goes, and its job (an RQ job, or the API's handed-off item it held) is
queued again at the front (once; a job whose worker dies a second time fails with that reason,
so a caller gets an error, never a verdict).

Called by the janitor for every dead worker it finds, by `serve` the moment one of its workers
exits, and by a worker starting under a name a dead one still holds.
"""

from __future__ import annotations

import logging
from typing import cast

from django.conf import settings
from redis import Redis
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.registry import StartedJobRegistry
from rq.utils import as_text
from rq.worker import Worker
from rq.worker_registration import REDIS_WORKER_KEYS, WORKERS_BY_QUEUE_KEY

from core.queues import WORKER_HEALTH_HASH, redis_now, workers_dead
from problems.verify_contract import handoff_recover

log = logging.getLogger(__name__)

# How many times a job went back to its queue because its worker died under it.
REQUEUED_META = "hardtests_requeued_after_worker_death"
MAX_REQUEUES = 1


def _job_recover(connection: Redis, job_id: str, *, worker_name: str, reason: str) -> str:
    try:
        job = Job.fetch(job_id, connection=connection)
    except Exception:  # NoSuchJobError, or a payload we cannot read: nothing to run again
        return "gone"
    if job.get_status(refresh=True) != JobStatus.STARTED:
        return "not running"
    registry = StartedJobRegistry(job.origin, connection=connection)
    with connection.pipeline() as pipe:
        registry.remove_executions(job, pipeline=pipe)
        for entry in cast(list[bytes], connection.zrange(registry.key, 0, -1)):
            if as_text(entry).split(":", 1)[0] == job.id:
                pipe.zrem(registry.key, entry)
        if int(job.meta.get(REQUEUED_META, 0)) >= MAX_REQUEUES:
            job.set_status(JobStatus.FAILED, pipeline=pipe)
            job._handle_failure(f"WorkerDied: the worker running it died again ({reason})", pipe,
                                worker_name=worker_name)
            pipe.execute()
            return "failed"
        pipe.execute()
    job.meta[REQUEUED_META] = int(job.meta.get(REQUEUED_META, 0)) + 1
    job.save_meta()  # type: ignore[no-untyped-call]  # rq leaves save_meta unannotated
    Queue(job.origin, connection=connection).enqueue_job(job, at_front=True)
    return "requeued"


def worker_reap(connection: Redis, name: str, *, reason: str) -> str | None:
    """Forget the dead worker `name` and recover its job; what became of the job (None: it held none).

    It leaves every list, whatever survives of its own hash: after a Redis restart a worker's
    beat lists it again on its queues but RQ's hash (which names those queues) is gone, so the
    queues' lists are found by their keys, not by the hash."""
    key = Worker.redis_worker_namespace_prefix + name
    job_id, queues = cast(list[bytes | None], connection.hmget(key, ["current_job", "queues"]))
    lists = {WORKERS_BY_QUEUE_KEY % queue for queue in as_text(queues or b"").split(",") if queue}
    lists.update(WORKERS_BY_QUEUE_KEY % queue for queue in settings.RQ_QUEUE_NAMES)
    lists.update(as_text(k) for k in connection.scan_iter(match=WORKERS_BY_QUEUE_KEY % "*", count=1000))
    with connection.pipeline() as pipe:
        for listing in sorted(lists):
            pipe.srem(listing, key)
        pipe.srem(REDIS_WORKER_KEYS, key)
        pipe.delete(key)
        pipe.hdel(WORKER_HEALTH_HASH, name)
        pipe.execute()
    outcome = None
    if job_id:
        outcome = _job_recover(connection, as_text(job_id), worker_name=name, reason=reason)
    handed = handoff_recover(connection, name, max_requeues=MAX_REQUEUES, reason=reason)
    if handed is not None:
        outcome = handed
    log.warning("worker %s is dead (%s): unregistered; its job %s", name, reason,
                f"{as_text(job_id)} {outcome}" if job_id else "handed off, " + handed if handed else "none")
    return outcome


def _listed_names(connection: Redis) -> tuple[list[str], dict[bytes, bytes], float]:
    """Every worker name on any RQ list (the all-workers set and each queue's), the health hash
    and Redis's time."""
    with connection.pipeline(transaction=False) as pipe:
        pipe.smembers(REDIS_WORKER_KEYS)
        for queue in settings.RQ_QUEUE_NAMES:
            pipe.smembers(WORKERS_BY_QUEUE_KEY % queue)
        pipe.hgetall(WORKER_HEALTH_HASH)
        pipe.time()
        *listings, health, now = pipe.execute()
    prefix = Worker.redis_worker_namespace_prefix
    names = sorted({as_text(k)[len(prefix):] for keys in listings for k in keys if as_text(k).startswith(prefix)})
    return names, health, redis_now(now)


def dead_workers_sweep(connection: Redis) -> int:
    """Reap every listed worker that is not alive by its own word (a checked worker whose beat
    has stopped; a name left on a list with neither a record nor RQ's key); how many."""
    names, health, now = _listed_names(connection)
    with connection.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.exists(Worker.redis_worker_namespace_prefix + name)
        exists = pipe.execute()
    registered = {name for name, found in zip(names, exists, strict=True) if found}
    dead = workers_dead(health, names, now, registered=registered)
    for name in dead:
        worker_reap(connection, name, reason="no beat")
    return len(dead)
