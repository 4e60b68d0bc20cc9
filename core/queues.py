"""RQ queues built from settings at call time.

django_rq.get_queue() resolves RQ_QUEUES once, at import; building the connection from
settings.REDIS_URL when it is needed sees a changed URL (tests run a private Redis) and is
the same connection in production. Every app enqueues through here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection
from typing import Any, cast

import redis
from django.conf import settings
from rq import Queue

from core.embedded import EmbeddedRedisError, ensure_redis

# The queues, named by what they carry. The names are what workers listen on (serve, compose,
# systemd units), so they stay as deployed: `api` carries the verification API's jobs and is
# taken first by every sandbox worker; `sandbox` carries bulk judging (evaluations, "judge all").
VERIFICATION_QUEUE = "api"
JUDGING_QUEUE = "sandbox"
GENERATION_QUEUE = "generation"
DEFAULT_QUEUE = "default"

_connections: dict[tuple[str, bool], redis.Redis] = {}
_lock = threading.Lock()


def redis_connection(*, blocking: bool = False) -> redis.Redis:
    """The process's one Redis client for settings.REDIS_URL (built when first needed, so a URL
    changed later, as tests do, is seen).

    blocking=True: a client without a socket read timeout, for commands that block longer than
    30 s (the API waits on XREAD up to HARDTESTS_API_SYNC_TIMEOUT_S). Both connect with a short
    timeout, so a Redis that is down turns into a quick RedisError (the API's 503), not a hang;
    a client survives a Redis restart (redis-py reconnects on the next command).
    """
    url = settings.REDIS_URL
    key = (url, blocking)
    client = _connections.get(key)
    if client is not None:
        return client
    with _lock:
        client = _connections.get(key)
        if client is None:
            try:
                ensure_redis()  # the embedded server when REDIS_URL is unset (a no-op otherwise)
            except EmbeddedRedisError:
                pass  # the first command fails with a RedisError, which callers report
            client = redis.Redis.from_url(
                url, socket_connect_timeout=2, socket_timeout=None if blocking else 30,
                health_check_interval=30, retry_on_timeout=False,
            )
            _connections[key] = client
        return client


def get_queue(name: str) -> Queue:
    # settings.RQ_QUEUES mixes str and int values (the URL, the timeout): read as object
    configured = settings.RQ_QUEUES.get(name, {}).get("DEFAULT_TIMEOUT", 3600)
    timeout = configured if isinstance(configured, int) else 3600
    return Queue(name, connection=redis_connection(), default_timeout=timeout)


def verification_queue() -> Queue:
    """The queue of the verification API's jobs, on the blocking client the API waits with."""
    return Queue(VERIFICATION_QUEUE, connection=redis_connection(blocking=True))


# What each checked worker last found about itself (hardtests_web/ops/worker.py): one hash,
# a field per worker name, so that the API reads every worker's health in the same round trip
# as the queue's workers and backlog. A record names its own expiry (a hash field has no TTL)
# on Redis's clock, not a host's, so machines whose clocks differ agree on it: a worker that
# died without a word stops counting once it has passed.
WORKER_HEALTH_HASH = "hardtests:worker-health"
DEAD_RECORD_KEEP_S = 3600


def redis_now(answer: tuple[int, int]) -> float:
    """Redis's TIME answer (seconds, microseconds) as epoch seconds."""
    seconds, micros = answer
    return seconds + micros / 1e6


def worker_health_publish(connection: redis.Redis, name: str, record: dict[str, Any], ttl_s: float) -> None:
    """Store `name`'s health, valid for `ttl_s`, and drop the records that have expired: under
    WATCH (redis-py's `transaction` tries again when another worker wrote meanwhile), so a
    worker's fresh record is never dropped as another's stale one."""

    def publish(pipe: redis.client.Pipeline) -> None:
        # Before multi() a WATCHing pipeline runs each command at once and returns its answer;
        # redis-py types every command's answer as "Awaitable | Any" (its sync and asyncio
        # clients share the signatures), hence the casts.
        now = redis_now(cast(tuple[int, int], pipe.time()))
        # An expired record stays a while: it is how a killed worker is told from a plain one
        # (which publishes nothing), so the API and the janitor can count it dead at once.
        published = cast(dict[bytes, bytes], pipe.hgetall(WORKER_HEALTH_HASH))
        stale = [field for field, value in published.items()
                 if _health_valid(value, now - DEAD_RECORD_KEEP_S) is None]
        pipe.multi()
        if stale:
            # redis-py annotates fields as str; it sends bytes as they are (HGETALL gave these)
            pipe.hdel(WORKER_HEALTH_HASH, *stale)  # type: ignore[arg-type]
        pipe.hset(WORKER_HEALTH_HASH, name, json.dumps({**record, "expires_at": now + ttl_s}))

    connection.transaction(publish, WORKER_HEALTH_HASH)


def worker_health_forget(connection: redis.Redis, name: str) -> None:
    connection.hdel(WORKER_HEALTH_HASH, name)


def _health_valid(raw: bytes | str | None, now: float) -> dict[str, Any] | None:
    """The record, unless it is malformed or has expired at `now` (Redis's clock)."""
    try:
        record = json.loads(raw) if raw else None
        if not isinstance(record, dict) or float(record.get("expires_at", 0)) <= now:
            return None
    except (ValueError, TypeError):
        return None
    return record


def worker_health_parse(raw: dict[bytes, bytes], names: list[str], now: float) -> dict[str, dict[str, Any]]:
    """From the whole hash (HGETALL), the unexpired health of each named worker that has one;
    `now` is Redis's time (read in the same round trip: `redis_now(pipe.time())`)."""
    found = {}
    for name in names:
        record = _health_valid(raw.get(name.encode()), now)
        if record is not None:
            found[name] = record
    return found


def _expired(raw: bytes | str, now: float) -> bool:
    """True only for a well-formed record whose time has passed (a malformed one is no word)."""
    try:
        record = json.loads(raw)
        return isinstance(record, dict) and float(record.get("expires_at", 0)) <= now
    except (ValueError, TypeError):
        return False


def workers_alive(published: dict[bytes, bytes], names: list[str], now: float,
                  *, registered: Collection[str] | None = None) -> list[str]:
    """The named workers alive by their own word, never by a list's: a checked worker counts
    only while its health record is fresh (it renews it every HARDTESTS_WORKER_BEAT_S from a
    thread of its own; a killed, stopped or cut-off worker stops counting
    HARDTESTS_WORKER_DEAD_S later, whatever RQ's lists still say). A worker that publishes no
    record (a plain rqworker) counts while RQ's own key for it lives (`registered`: the names
    whose `rq:worker:<name>` hash exists, as `queue_workers_read` gives them; that key expires
    with RQ's heartbeat). A name left in a queue's list by a Redis restart or a partial
    reaping has neither: it is a ghost, and does not count. registered=None: not known, a
    record-less name is taken on RQ's word (the janitor and the deep page, which list)."""
    alive = []
    for name in names:
        raw = published.get(name.encode())
        if raw:
            if _health_valid(raw, now) is not None:
                alive.append(name)
            elif not _expired(raw, now) and (registered is None or name in registered):
                alive.append(name)  # a malformed record is no word either way
        elif registered is None or name in registered:
            alive.append(name)
    return alive


def workers_dead(published: dict[bytes, bytes], names: list[str], now: float,
                 *, registered: Collection[str] | None = None) -> list[str]:
    alive = set(workers_alive(published, names, now, registered=registered))
    return [name for name in names if name not in alive]


# A queue's listed workers with, for each, whether RQ's own key for it still exists: one EVAL,
# so the API reads it in the round trip that reads the health records. (Keys read in a script
# without being declared: fine on a single Redis, which is what RQ supports.)
_QUEUE_WORKERS_LUA = """
local out = {}
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  table.insert(out, key)
  table.insert(out, redis.call('EXISTS', key))
end
return out
"""
_WORKER_KEY_PREFIX = "rq:worker:"


def queue_workers_read(pipe: redis.client.Pipeline | redis.Redis, queue_name: str) -> Any:
    """Queue the read of `queue_name`'s listed workers on `pipe`; parse the answer with
    `queue_workers_parse`."""
    return pipe.eval(_QUEUE_WORKERS_LUA, 1, f"rq:workers:{queue_name}")


def queue_workers_parse(answer: list[Any]) -> tuple[list[str], set[str]]:
    """(every listed worker's name, the names whose RQ key exists) from `queue_workers_read`."""
    names: list[str] = []
    registered: set[str] = set()
    for key, exists in zip(answer[::2], answer[1::2], strict=True):
        text = key.decode() if isinstance(key, bytes) else str(key)
        name = text.removeprefix(_WORKER_KEY_PREFIX)
        names.append(name)
        if int(exists):
            registered.add(name)
    return names, registered


def queue_workers_alive(connection: redis.Redis, queue_name: str) -> list[str]:
    """The workers of `queue_name` that can take a job now (see workers_alive), in one round trip."""
    with connection.pipeline(transaction=False) as pipe:
        queue_workers_read(pipe, queue_name)
        pipe.hgetall(WORKER_HEALTH_HASH)
        pipe.time()
        listed, published, now = pipe.execute()
    names, registered = queue_workers_parse(listed)
    return workers_alive(published, names, redis_now(now), registered=registered)


def worker_health_read(connection: redis.Redis, names: list[str]) -> dict[str, dict[str, Any]]:
    """The last published, unexpired health of each named worker that publishes one."""
    if not names:
        return {}
    with connection.pipeline(transaction=False) as pipe:
        pipe.hmget(WORKER_HEALTH_HASH, names)
        pipe.time()
        raw, now = pipe.execute()
    published = {name.encode(): value for name, value in zip(names, raw, strict=True) if value}
    return worker_health_parse(published, names, redis_now(now))
