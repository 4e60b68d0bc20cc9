"""Every setting the project reads from its environment, each declared once: name, type, default, doc.

`hardtests_web/settings.py` builds Django's settings from it (`read_int(name)` and the like: the
type and default come from here), `api/conf.py` and the gunicorn configuration read it too, and
`scripts/config_docs.py` writes docs/configuration.md and .env.example from it.
tests/hardtests_web/test_configuration_docs.py holds it complete: every setting read anywhere in
the product is an entry, every entry is read somewhere, and both files are what the script writes.

No Django is set up to import this (settings.py imports it); core.env's readers parse the values,
so a malformed one fails loudly at start-up.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from core.env import env_bool, env_float, env_int, env_list, env_str

Value = str | int | float | bool | list[str]
T = TypeVar("T", str, int, float, bool, list[str])

SETTINGS_PY = "hardtests_web/settings.py"


@dataclass(frozen=True)
class Setting:
    name: str  # the environment variable; a Django setting of the same name when settings.py makes one
    type: builtins.type[Value]  # str, int, float, bool or list (comma-separated strings)
    # A value; a callable for a default that depends on the machine (the CPU count); None when its
    # reader computes it from other settings (it passes `computed=`), as `shown` says.
    default: Value | Callable[[], Value] | None
    doc: str  # one line of Markdown: the docs page's meaning column, the comment in .env.example
    section: str
    # How the docs show a default that is not a plain value.
    shown: str = ""
    # Who reads it: settings.py, else a path (file or package) holding the name, e.g. the sandbox,
    # which imports nothing of the project, or compose.yaml.
    read_by: str = SETTINGS_PY
    # Settable from a file too: NAME_FILE names a file holding the value (compose secrets).
    from_file: bool = False
    # Set by the project for its own processes, never by an operator.
    internal: bool = False

    @property
    def leave_unset(self) -> bool:
        """True when an empty value is not the default: commented out in .env.example."""
        return self.internal or bool(self.shown)

    def default_value(self) -> Value | None:
        return self.default() if callable(self.default) else self.default


def _cpus() -> int:
    return os.cpu_count() or 1


SITE = "The site"
STORAGE = "Database, Redis and storage"
PROCESSES = "Processes"
LLM = "The LLM"
GENERATION = "Generation (HardTestGen)"
ORACLE_FREE = "Oracle-free modes"
CAMPAIGNS = "Campaigns"
API = "Verification API"
JUDGING = "Judging and kill order"
CURATION = "Curation"
SANDBOX = "Sandbox"
COMPOSE = "compose.yaml only"

SECTIONS = (SITE, STORAGE, PROCESSES, LLM, GENERATION, ORACLE_FREE, CAMPAIGNS, API, JUDGING, CURATION, SANDBOX,
            COMPOSE)

_S = Setting
ENTRIES: tuple[Setting, ...] = (
    # The site
    _S("DEBUG", bool, False, "`1` only for development (`serve --dev` sets it for its children): Django's debug pages "
       "list every URL pattern and setting", SITE),
    _S("HARDTESTS_DEMO", bool, True, "demo mode (what `make run` serves): demo logins exist and the login page lists "
       "them, a secret key is generated under `var/` when none is given. Set `0` in production: no demo logins, "
       "`SECRET_KEY` required, secure cookies", SITE),
    _S("SECRET_KEY", str, "", "Django's secret key (or `SECRET_KEY_FILE`); required when `DEBUG=0` and "
       "`HARDTESTS_DEMO=0`", SITE, shown="generated once into `var/secret_key` (development and demo only)"),
    _S("SECRET_KEY_FILE", str, "", "a file holding the secret key, e.g. `/run/secrets/secret_key`", SITE),
    _S("ALLOWED_HOSTS", list, ["127.0.0.1", "localhost", "[::1]", "testserver"],
       "host names the web server answers", SITE),
    _S("CSRF_TRUSTED_ORIGINS", list, [], "origins behind a TLS proxy, e.g. `https://hardtests.example.org`", SITE),
    _S("SECURE_COOKIES", bool, None, "with `DEBUG=0`, send session and CSRF cookies over HTTPS only (the demo is "
       "served over plain HTTP on loopback)", SITE, shown="`0` in demo mode, else `1`"),
    _S("HARDTESTS_PUBLIC_READ", bool, False, "`1`: anyone may browse, read-only; writes still need a login", SITE),
    _S("HARDTESTS_HEALTH_TOKEN", str, "", "bearer token that opens `/healthz/deep` to monitoring (empty: staff "
       "login only)", SITE, from_file=True),
    _S("LOG_LEVEL", str, "INFO", "root log level", SITE),

    # Database, Redis and storage
    _S("HARDTESTS_VAR_DIR", str, None, "database, secret key, embedded Redis, media, compile cache", STORAGE,
       shown="`var/` in the checkout"),
    _S("DATABASE_URL", str, None, "any `dj-database-url` URL, e.g. `postgres://user:pw@host/db`", STORAGE,
       shown="`sqlite:///var/db.sqlite3` (WAL, busy timeout)", from_file=True),
    _S("DB_CONN_MAX_AGE", int, 60, "how long a web thread keeps its database connection between requests, seconds "
       "(checked before reuse; `0`: one connection per request)", STORAGE),
    _S("SQLITE_BUSY_TIMEOUT_S", int, 30, "how long SQLite waits for a lock, seconds", STORAGE),
    _S("REDIS_URL", str, "", "the Redis of the RQ queues", STORAGE,
       shown="an embedded `redis-server` on `var/redis/redis.sock`", from_file=True),
    _S("HARDTESTS_MEDIA_ROOT", str, "", "content-addressed test data too large to go inline, when "
       "`HARDTESTS_STORAGE_URL` is empty", STORAGE, shown="`var/media`"),
    _S("HARDTESTS_STORAGE_URL", str, "", "where bodies too large to go inline live: empty (files under "
       "`HARDTESTS_MEDIA_ROOT`), a directory (`/srv/bodies` or `file:///srv/bodies`, e.g. a shared mount) or "
       "`s3://bucket/prefix` (django-storages + boto3). Every machine that judges must see the same storage",
       STORAGE),
    _S("HARDTESTS_BLOB_INLINE_MAX", int, 16384, "a test body whose compressed size is at most this many bytes is kept "
       "in its `Blob` row, not in a file of its own; `0` keeps every body in a file. Lowering or raising it affects "
       "only bodies stored afterwards; both kinds are always readable", STORAGE),
    _S("AWS_S3_ENDPOINT_URL", str, "", "with `s3://`: the endpoint of an S3-compatible server (MinIO, Ceph, ...), "
       "e.g. `http://minio:9000`; empty for AWS", STORAGE, read_by="core/storage.py"),
    _S("AWS_ACCESS_KEY_ID", str, "", "with `s3://`: the access key; empty: boto3's own chain (instance role, ...)",
       STORAGE, read_by="core/storage.py"),
    _S("AWS_SECRET_ACCESS_KEY", str, "", "with `s3://`: the secret key; empty: boto3's own chain", STORAGE,
       read_by="core/storage.py", from_file=True),
    _S("AWS_S3_REGION_NAME", str, "", "with `s3://`: the region; empty: `AWS_DEFAULT_REGION`", STORAGE,
       read_by="core/storage.py"),
    _S("AWS_DEFAULT_REGION", str, "", "boto3's own region variable, used when `AWS_S3_REGION_NAME` is empty",
       STORAGE, read_by="core/storage.py"),
    _S("AWS_S3_ADDRESSING_STYLE", str, "", "with `s3://`: `path` for most self-hosted servers (empty: boto3's "
       "choice)", STORAGE, read_by="core/storage.py"),
    _S("HARDTESTS_STATIC_ROOT", str, "", "where `collectstatic` writes (the image keeps it outside the var volume)",
       STORAGE, shown="`var/staticfiles`"),
    _S("HF_ENDPOINT", str, "", "the Hugging Face Hub `export --to hub` pushes to (empty: huggingface.co)", STORAGE,
       read_by="problems/exporters/hub.py"),

    # Processes
    _S("PORT", int, 8000, "web port of `make run` / `serve` and of gunicorn's default bind", PROCESSES,
       read_by="hardtests_web/management/commands/serve.py"),
    _S("HARDTESTS_SANDBOX_WORKERS", int, 2, "RQ workers on the `sandbox` queue that `make run` / `serve` starts",
       PROCESSES),
    _S("HARDTESTS_API_RESERVED_WORKERS", int, 1, "sandbox workers `serve` keeps for the verification API only (they "
       "never take a bulk judging job; with 2 or more)", PROCESSES),
    _S("HARDTESTS_GENERATION_WORKERS", int, 1, "RQ workers on the `generation` queue that `make run` / `serve` "
       "starts", PROCESSES),
    _S("HARDTESTS_LLM_WORKERS", int, 1, "`llm_worker` processes (the LLM stage of campaigns) that `make run` / "
       "`serve` starts; `0`: none (run them elsewhere)", PROCESSES),
    _S("HARDTESTS_JOB_TIMEOUT_S", int, 3600, "RQ job timeout of the queues, seconds", PROCESSES),
    _S("HARDTESTS_JANITOR_PERIOD_S", float, 60.0, "seconds between the janitor's passes (dead runs and judging "
       "tasks, expired jobs)", PROCESSES),
    _S("HARDTESTS_JANITOR_FAST_S", float, 10.0, "seconds between the janitor's fast passes: dead workers, dead "
       "generation runs, finished campaigns", PROCESSES),
    _S("HARDTESTS_WORKER_CHECK_S", float, 30.0, "seconds between a sandbox worker's checks that it can reach the "
       "database and read the storage; while one fails it takes no job", PROCESSES),
    _S("HARDTESTS_WORKER_BEAT_S", float, 5.0, "a checked worker's pulse, seconds (from its own thread, even mid-job)",
       PROCESSES),
    _S("HARDTESTS_WORKER_DEAD_S", float, 20.0, "a worker whose pulse is this old is dead: the API answers "
       "`no_workers`, the janitor (or `serve`) queues its job again", PROCESSES),
    _S("HARDTESTS_EMBEDDED_REDIS_SUPERVISED", bool, False, "set by `serve` for its children only (it supervises the "
       "embedded Redis); never set it yourself", PROCESSES, internal=True),
    _S("HARDTESTS_WEB_BIND", str, "", "gunicorn's address (`serve` passes its own `--host`/`--port`)", PROCESSES,
       shown="`0.0.0.0:$PORT`", read_by="hardtests_web/gunicorn_conf.py"),
    _S("HARDTESTS_WEB_WORKERS", int, lambda: min(4, 2 * _cpus()), "gunicorn processes", PROCESSES,
       shown="`min(4, 2 x cores)`", read_by="hardtests_web/gunicorn_conf.py"),
    _S("HARDTESTS_WEB_THREADS", int, 8, "threads per gunicorn process (a verification waits on a worker, not the "
       "CPU)", PROCESSES, read_by="hardtests_web/gunicorn_conf.py"),
    _S("HARDTESTS_WEB_MAX_REQUESTS", int, 2000, "gunicorn replaces a process after this many requests (`0`: never)",
       PROCESSES, read_by="hardtests_web/gunicorn_conf.py"),
    _S("FORWARDED_ALLOW_IPS", str, "127.0.0.1", "proxies gunicorn trusts for `X-Forwarded-*`", PROCESSES,
       read_by="hardtests_web/gunicorn_conf.py"),

    # The LLM
    _S("OPENAI_BASE_URL", str, "", "any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server), e.g. "
       "`http://127.0.0.1:11434/v1`", LLM),
    _S("OPENAI_API_KEY", str, "", "its key", LLM, from_file=True),
    _S("HARDTESTS_LLM_MODEL", str, "gpt-4o", "default model", LLM),
    _S("HARDTESTS_LLM_MODELS", list, None, "comma-separated models offered on the regenerate form", LLM,
       shown="the default model"),
    _S("HARDTESTS_LLM_TEMPERATURE", float, 0.2, "sampling temperature", LLM),
    _S("HARDTESTS_LLM_TIMEOUT_S", float, 300.0, "timeout of one LLM call, seconds", LLM),
    _S("HARDTESTS_LLM_MAX_RETRIES", int, 4, "the openai SDK's own retries (rate limits, 5xx, timeouts, dropped "
       "connections; it honours `retry-after-ms` and `Retry-After` in seconds or as a date); each attempt is an "
       "`LLMCall` row", LLM),
    _S("HARDTESTS_LLM_CONCURRENCY", int, 32, "LLM calls in flight at once, across all workers (a Redis semaphore of "
       "30-second leases its holders renew, so a killed worker frees its slots within 30 s)", LLM),
    _S("HARDTESTS_LLM_REPLY_RETRIES", int, 1, "retries of a malformed reply (or a validator/judge failing its "
       "self-check), with the problem fed back", LLM),
    _S("HARDTESTS_LLM_MAX_TOKENS", int, 16384, "completion budget sent with every call; a reply cut off by it "
       "(`finish_reason: length`, recorded) is sent back as \"shorten it\"", LLM),
    _S("HARDTESTS_LLM_REASONING", bool, False, "`1` for reasoning models (o1/o3, R1-style): no temperature sent, the "
       "budget goes as `max_completion_tokens`; reasoning tokens are recorded either way", LLM),

    # Generation (HardTestGen)
    _S("HARDTESTS_DIRECT_INPUTS", int, 10, "direct inputs asked of the LLM (Type 1; paper default)", GENERATION),
    _S("HARDTESTS_REGULAR_CALLS", int, 20, "calls of a single regular generator (Type 2)", GENERATION),
    _S("HARDTESTS_STRATIFIED_CALLS", int, 10, "calls per stratified generator (Type 2)", GENERATION),
    _S("HARDTESTS_HACKING_CALLS", int, 10, "calls per hacking generator (Type 3)", GENERATION),
    _S("HARDTESTS_MAX_ORACLES", int, 8, "oracles tried, in reliability order", GENERATION),
    _S("HARDTESTS_ORACLE_AGREEMENT", float, 0.9, "share of inputs (among those where at least one of the pair "
       "finished) on which two oracles must agree", GENERATION),
    _S("HARDTESTS_MIN_ORACLES", int, 2, "oracles that must compile and pass the samples (and official tests) before "
       "any LLM call; `1` allows single-oracle suites, marked unverified on the run page and in exports", GENERATION),
    _S("HARDTESTS_VALIDATOR_ERROR_SHARE", float, 0.1, "a validator crash or timeout on any hacking input, or on more "
       "than this share of inputs, fails the run (`validator_error`)", GENERATION),
    _S("HARDTESTS_CHECKER_REVIEW", bool, True, "after the LLM calls, a review call checks the validator and judge "
       "against concrete cases (samples, oracle outputs, inputs); a revision must pass the self-checks", GENERATION),
    _S("HARDTESTS_REPAIR_ROUNDS", int, 3, "a generator that crashes, times out, returns nothing or only invalid "
       "inputs goes back to the LLM this many times", GENERATION),
    _S("HARDTESTS_REPAIR_PROBE_CALLS", int, 2, "seeded calls per generator function when trying it before "
       "materialising", GENERATION),
    _S("HARDTESTS_REFINE_ALPHA", float, 0.95, "refinement (the CodeContests-O feedback loop) stops once TPR on the "
       "tuning candidates reaches this ...", GENERATION),
    _S("HARDTESTS_REFINE_BETA", float, 0.90, "... and TNR reaches this", GENERATION),
    _S("HARDTESTS_REFINE_MAX_ROUNDS", int, 3, "... or after this many feedback rounds (`0`: no refinement call)",
       GENERATION),
    _S("HARDTESTS_HELDOUT_SHARE", float, 0.3, "share of each label of a problem's candidates held out from "
       "refinement", GENERATION),
    _S("HARDTESTS_SPLIT_MIN_CANDIDATES", int, 6, "fewer labelled candidates than this: all are tuning (reports say "
       "so)", GENERATION),
    _S("HARDTESTS_INPUT_BUDGET_S", float, 180.0, "wall seconds per problem to generate and validate its inputs",
       GENERATION),
    _S("HARDTESTS_OUTPUT_BUDGET_S", float, 240.0, "wall seconds per problem to run its oracles", GENERATION),
    _S("HARDTESTS_SUITE_MAX_MB", float, 500.0, "largest suite a run may make (inputs + outputs)", GENERATION),
    _S("HARDTESTS_GENERATOR_TIME_S", float, 10.0, "CPU seconds of one generator call (untrusted LLM-written code)",
       GENERATION),
    _S("HARDTESTS_GENERATOR_MEMORY_MB", int, 1024, "memory of one generator call, MiB", GENERATION),
    _S("HARDTESTS_REPRODUCIBLE_CHECK_CALLS", int, 2, "first calls of each generator made twice; a generator whose "
       "input changes is dropped (`0`: off)", GENERATION),
    _S("HARDTESTS_BATCH_GENERATOR_TIME_S", float, 120.0, "CPU seconds of a Klear-style `generate_test_inputs()` call",
       GENERATION),
    _S("HARDTESTS_CHECKER_TIME_S", float, 10.0, "CPU seconds of a validator or judging-function call: the same "
       "limit in materialisation, judging, the API and studies", GENERATION),
    _S("HARDTESTS_CHECKER_MEMORY_MB", int, 1024, "memory of a validator or judging-function call, MiB", GENERATION),
    _S("HARDTESTS_ORACLE_TIME_FACTOR", float, 2.0, "oracles get this multiple of the problem's time limit (they are "
       "trusted to be correct, not fast)", GENERATION),
    _S("HARDTESTS_MATERIALISE_THREADS", int, lambda: min(4, _cpus()), "parallel sandbox batches while materialising",
       GENERATION, shown="`min(4, cores)`"),
    _S("HARDTESTS_RUN_STALE_S", float, 120.0, "heartbeat age after which a running generation run is declared dead",
       GENERATION),

    # Oracle-free modes
    _S("HARDTESTS_ORACLE_FREE_AUTO", bool, True, "a from-scratch run of a problem with no usable oracle runs "
       "HardTests A.7 instead ([Oracle-free suites](oracle-free.md))", ORACLE_FREE),
    _S("HARDTESTS_ORACLE_FREE_EDGE_CALLS", int, 2, "calls per edge-case generator", ORACLE_FREE),
    _S("HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE", bool, True, "ask an independent second brute force to cross-check "
       "the first", ORACLE_FREE),
    _S("HARDTESTS_BRUTE_FORCE_TIME_S", float, 10.0, "CPU seconds per small input for a brute force", ORACLE_FREE),
    _S("HARDTESTS_ACECODER_TESTS", int, 20, "tests AceCoder asks the LLM for per problem", ORACLE_FREE),
    _S("HARDTESTS_ACECODER_MIN_TESTS", int, 5, "AceCoder drops a problem with fewer surviving tests", ORACLE_FREE),
    _S("HARDTESTS_ACECODER_SOLUTION_MODEL", str, "", "the model that writes AceCoder's filtering solution (the paper: "
       "a stronger one); empty: the run's model", ORACLE_FREE),

    # Campaigns
    _S("HARDTESTS_LLM_IN_FLIGHT", int, 32, "LLM calls in flight per `llm_worker` process (threads waiting on the "
       "network)", CAMPAIGNS),
    _S("HARDTESTS_LLM_STAGE_THREADS", int, 0, "threads per `llm_worker` (`0`: twice `HARDTESTS_LLM_IN_FLIGHT`): the "
       "ones beyond the calls in flight do runs' CPU work (pre-flight, validator review, saving) meanwhile; each "
       "holds a database connection while it carries a run (mind PostgreSQL's `max_connections`)", CAMPAIGNS),
    _S("HARDTESTS_LLM_RPM", int, 0, "requests per minute per model, one Redis token bucket shared by every worker "
       "(`0`: no limit)", CAMPAIGNS),
    _S("HARDTESTS_LLM_TPM", int, 0, "tokens per minute per model, shared likewise (`0`: no limit)", CAMPAIGNS),
    _S("HARDTESTS_LLM_RATE_LIMITS", list, [], "per-model overrides of those, `MODEL=RPM:TPM,...`", CAMPAIGNS),
    _S("HARDTESTS_LLM_PRICES", list, ["gpt-4o=2.5:10", "gpt-4o-mini=0.15:0.6"], "USD per million prompt:completion "
       "tokens, `MODEL=IN:OUT,...`, for campaign costs and caps (unlisted models cost 0)", CAMPAIGNS),
    _S("HARDTESTS_CAMPAIGN_BACKOFF_S", float, 10.0, "first delay before a campaign run refused by the LLM (429, 5xx, "
       "timeout) is tried again; doubled each time, at most 300 s", CAMPAIGNS),
    _S("HARDTESTS_LLM_UNAVAILABLE_AFTER_S", float, 1800.0, "total wait after which such a run fails as "
       "`llm_unavailable`", CAMPAIGNS),

    # Verification API
    _S("HARDTESTS_API_RATE_LIMIT", int, 600, "requests per minute per token (a sliding window in Redis); a token's own "
       "value overrides it", API),
    _S("HARDTESTS_API_MAX_CODE_KB", int, 64, "largest program accepted, KiB of UTF-8 (larger: 413)", API),
    _S("HARDTESTS_API_MAX_BODY_KB", int, 2048, "largest request body, KiB (a batch of programs); larger is refused "
       "with 413 before parsing", API),
    _S("HARDTESTS_API_SYNC_TIMEOUT_S", int, 60, "how long `/verify` waits for the workers (then 503) and "
       "`/verify/batch` before answering 202 with a job id", API),
    _S("HARDTESTS_API_BATCH_MAX", int, 32, "most programs in one `/verify/batch`", API),
    _S("HARDTESTS_API_QUEUE_MAX", int, 1000, "new work is refused with 503 while the `api` queue holds more jobs "
       "than this", API),
    _S("HARDTESTS_API_JOB_TIMEOUT_S", int, 600, "hard limit on one verification job on a worker (its RQ timeout)",
       API),
    _S("HARDTESTS_API_RESULT_TTL_S", int, 3600, "how long batch results stay readable at `GET /api/v1/jobs/{id}`",
       API),
    _S("HARDTESTS_API_VERDICT_CACHE_S", int, 300, "a verification asked again within this (same owner, suite, limits, "
       "subset, language, mode, program) is answered with the first result, `\"cached\": true`, and not run; `0`: "
       "off ([Verification API](api.md))", API),
    _S("HARDTESTS_API_HANDOFF", bool, True, "a single `/verify` is handed straight to an idle checked sandbox worker "
       "(one list both block on) instead of through RQ's job records: about 2 ms less a call; `0`: every "
       "verification is an RQ job ([Operations](operations.md#the-hand-off))", API),
    _S("HARDTESTS_SANDBOXFUSION_PREFIX", str, "sandboxfusion/", "URL prefix of the SandboxFusion-compatible "
       "`/run_code` and `/submit` (empty: at the root)", API),
    _S("HARDTESTS_API_URL_TOKENS", bool, False, "`1`: accept an API token as a path segment (`.../t/<token>/run_code`, "
       "`/api/v1/openrlhf/t/<token>/reward`) for clients that cannot send headers", API),
    _S("HARDTESTS_API_TRUSTED_NETWORKS", list, [], "comma-separated CIDRs whose requests to those endpoints need no "
       "token (e.g. `10.0.0.0/8`)", API),
    _S("HARDTESTS_RUN_CODE_MAX_TIME_S", int, 20, "most CPU seconds one `/run_code` may ask for", API),
    _S("HARDTESTS_RUN_CODE_MAX_MEMORY_MB", int, 2048, "most MiB one `/run_code` may ask for", API),

    # Judging and kill order
    _S("HARDTESTS_JUDGE_PARALLEL", int, _cpus, "lanes of one verification: its tests are dealt round-robin (hacking "
       "tests first in every lane) to this many sandbox batches run at once, each a fresh sandbox; in fail-fast mode "
       "the first failure stops every lane. `1` runs them one after another. Each lane costs one sandbox start-up "
       "(with the Docker backend a container, about 0.8 s): lanes buy latency with a little throughput", JUDGING,
       shown="CPU count"),
    _S("HARDTESTS_JUDGE_ADMISSION", bool, True, "the verification and `/run_code` jobs of one host run at most one "
       "test per usable CPU between them (CPU slots held with `flock` under the var dir); a job judges with the lanes "
       "it got and, after 30 s without one, runs one lane anyway. `0`: each job runs its lanes at once", JUDGING),
    _S("HARDTESTS_STARVED_RERUNS", int, 3, "a verification answered SE because the machine withheld the CPU "
       "(\"overloaded\") is judged again by its worker this many times, with backoff and jitter, each at a moment a "
       "short probe gets half a CPU (at most 10 s of waiting), before the SE is answered", JUDGING),
    _S("HARDTESTS_TESTLIB_H", str, "", "the path of a `testlib.h` for kits and packages whose programs use testlib "
       "and bring no header of their own; empty: such a kit or package is refused with that reason before anything "
       "runs ([Problem packages and testlib](packages.md))", JUDGING),
    _S("HARDTESTS_KILL_ORDER", bool, True, "judge tests in each suite's kill order (the tests that fail known-wrong "
       "programs first); `0`: kind order", JUDGING),
    _S("HARDTESTS_KILL_ORDER_MIN_KILLS", int, 2, "a test moves ahead of kind order when it fails at least this many "
       "known-wrong programs", JUDGING),
    _S("HARDTESTS_KILL_ORDER_FROM_API", bool, False, "`1`: the tests a verification sent to the API fails (one row a "
       "failing program and test, `KillEvidence`) teach its suite's kill order too", JUDGING),
    _S("HARDTESTS_KILL_ORDER_FROM_CURATION", bool, True, "the tests a curation job's completions fail teach the kill "
       "order; `0`: off", JUDGING),
    _S("HARDTESTS_KILL_ORDER_REFRESH_S", int, 60, "from the API's evidence a suite's order is computed again at most "
       "this often (`0`: at each new row); from a curation job's, at each chunk's end", JUDGING),
    _S("HARDTESTS_FAST_SUITES", bool, True, "serve `suite=fast` (the kill matrix's set cover + largest tests); `0`: "
       "the full suite", JUDGING),

    # Curation
    _S("HARDTESTS_CURATION_CHUNK", int, 16, "completions verified per RQ job (a bounded chunk, so API verifications "
       "are not starved)", CURATION),
    _S("HARDTESTS_CURATION_CHAINS", int, 2, "chunk chains queued per job (about one per sandbox worker)", CURATION),
    _S("HARDTESTS_CURATION_QUEUE", str, "sandbox", "the RQ queue its chunks run on", CURATION),
    _S("HARDTESTS_CURATION_STALE_S", float, 900.0, "a claimed completion older than this is taken back by a resume, and a verifying "
       "job silent this long is resumed by the janitor",
       CURATION),
    _S("HARDTESTS_CURATION_JUDGE_PARALLEL", int, 0, "sandbox batches per program; `0`: `HARDTESTS_JUDGE_PARALLEL`, "
       "as the API judges. `1` saves a sandbox start-up per program where the chains alone keep every core busy",
       CURATION),
    _S("HARDTESTS_CURATION_DEDUP", bool, True, "a completion whose program (problem, language, code) was already "
       "verified in its job copies that verdict (no test runs; `same_as` in its results); `0`: verify every "
       "completion", CURATION),

    # Sandbox: read from the environment by the sandbox itself, which imports nothing of the project.
    _S("HARDTESTS_SANDBOX_BACKEND", str, "bwrap", "`bwrap` (bubblewrap) or `docker`", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_CACHE", str, "", "the compile cache (nothing is bound into a sandbox from here)", SANDBOX,
       shown="`$HARDTESTS_VAR_DIR/sandbox-cache`", read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_WORK_DIR", str, "", "where compiles write and what sandboxes bind comes from (a directory "
       "`hardtests-sandbox-<uid>-<key>` is made in it). Empty: `/var/tmp`, `$TMPDIR` or `/tmp` where one shares the "
       "compile cache's filesystem, else `/dev/shm` (only writable ones that allow exec; a chosen directory on a "
       "`noexec` filesystem is refused at start with that reason). A program sees this directory's path within its "
       "filesystem (`/proc/self/mountinfo`): choose one that names nothing of the installation, such as a temporary "
       "directory or a mount point of its own. A full disk here is a sandbox error (`SE`, 503 `judging_error`), "
       "never a verdict", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_COMPILE_CACHE_MAX_MB", int, 2048, "size cap of the compile cache (programs and C++ header caches), "
       "evicted least recently used first; entries used in the last 10 minutes are kept, since a batch may be "
       "running them", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_COMPILE_MAX_ARTIFACT_MB", int, 256, "a compiled program larger than this is a CE (\"the compiled "
       "program is N MB, over the limit\") and is not kept", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_CGROUPS", str, "auto", "cgroup accounting of each batch (memory limit and peak, pids, CPU of "
       "every task, OOM kills): `auto` v1 where writable, else v2, else none; `v1`; `v2`; `0` rlimits and rusage only "
       "(`1` = `auto`). v2 uses cpu.stat and cgroup.kill everywhere, memory and pids only where those controllers "
       "reach the worker's cgroup (it is the root, or the worker is alone in it and moves into a `hardtests-worker` "
       "leaf), the per-test memory peak from Linux 6.12; the rest falls back to rlimits and rusage. "
       "`bench/sandbox.py` prints what is in use", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_ALLOW_RUSAGE", bool, False, "`1`: where no cgroup gives the CPU time of every process of a "
       "test, judge with rusage alone (results say `accounting: \"rusage\"`); off, such judging answers `SE` with the "
       "reason", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_ZYGOTE", bool, True, "Python tests (bubblewrap backend) are forked from an interpreter "
       "started once per batch, each in its own PID/mount/IPC namespaces, under the same limits and filter (the "
       "sandbox page describes the zygote); `0` starts a fresh interpreter per test", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_WARM", int, _cpus, "spare sandboxes per kind of batch that a sandbox worker (and the "
       "benches) keeps started (bubblewrap backend, the sandbox page describes spares): a batch takes one that came "
       "up before it was needed instead of waiting about 10 ms for bubblewrap and the runner; each spare has run "
       "nothing. `0`: every batch starts its own", SANDBOX, shown="CPU count", read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_SPARE_NICE", int, 19, "the nice value a spare sandbox waits at (0-19), so that starting it "
       "(the runner's filter, a Python zygote's interpreter) yields the CPU to the batches running now and to their "
       "results on the way to the caller. A batch takes only a spare that is up, brings its processes back to nice 0 "
       "first (the runner refuses the batch otherwise), and starts its own sandbox when none is up. Needs "
       "CAP_SYS_NICE (root) or, where the sandbox runs as the worker's own uid, an RLIMIT_NICE hard limit of at least "
       "20; without either, and with `0`, spares run at normal priority", SANDBOX, read_by="sandbox"),
    _S("HARDTESTS_SANDBOX_DOCKER_IMAGE", str, "", "the docker backend's image (an empty rootfs, imported from a "
       "tarball when missing; no registry needed)", SANDBOX, shown="`hardtests-sandbox:<hash of its layout>`",
       read_by="sandbox"),
    _S("CC", str, "", "C compiler that builds the near-duplicate kernels (`review/evaluation/near_duplicates.c`) on "
       "first use; without one, near-duplicates are computed by rapidfuzz alone (same answers, slower)", SANDBOX,
       shown="`cc`, else `gcc`", read_by="review/evaluation/native.py"),

    # compose.yaml only: docker compose substitutes these from .env; its passwords are files under secrets/.
    _S("MINIO_ROOT_USER", str, "hardtests", "MinIO's user (its password is `secrets/minio_root_password`)", COMPOSE,
       read_by="compose.yaml"),
    _S("S3_BUCKET", str, "hardtests", "the bucket MinIO makes for the test bodies", COMPOSE, read_by="compose.yaml"),
    _S("WEB_PORT", int, 8000, "the host port of the web service", COMPOSE, read_by="compose.yaml"),
)

REGISTRY: dict[str, Setting] = {entry.name: entry for entry in ENTRIES}

# Settings settings.py makes that no variable of that name sets: computed from the entries above,
# or fixed. (Django's own settings, django.conf.global_settings, need no mention.)
COMPUTED: dict[str, str] = {
    "BASE_DIR": "the checkout",
    "VAR_DIR": "HARDTESTS_VAR_DIR as a path, made at start",
    "REDIS_URL_FROM_ENV": "REDIS_URL as given (empty: the embedded Redis)",
    "EMBEDDED_REDIS_DIR": "var/redis",
    "EMBEDDED_REDIS_SOCKET": "var/redis/redis.sock",
    "EMBEDDED_REDIS_SUPERVISED": "HARDTESTS_EMBEDDED_REDIS_SUPERVISED",
    "RQ_QUEUE_NAMES": "the queues, in the order sandbox workers take them",
    "RQ_QUEUES": "django-rq's queues, from REDIS_URL and HARDTESTS_JOB_TIMEOUT_S",
    "RQ_SHOW_ADMIN_LINK": "django-rq",
    "CONTENT_SECURITY_POLICY": "django-csp",
    "WHITENOISE_USE_FINDERS": "whitenoise, from DEBUG and HARDTESTS_DEMO",
    "WHITENOISE_AUTOREFRESH": "whitenoise, from DEBUG",
    "LOGIN_URL_PATH": "the login page's path, for the middleware",
}

# Values of these variables may come from a file: NAME_FILE (compose secrets, systemd credentials).
FROM_FILE: tuple[str, ...] = tuple(entry.name for entry in ENTRIES if entry.from_file)


def setting(name: str) -> Setting:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"{name} is not in core/config_registry.py: declare it there (name, type, default, doc)") from None


def _default(name: str, kind: type[T], computed: T | None) -> T:
    entry = setting(name)
    if entry.type is not kind:
        raise TypeError(f"{name} is a {entry.type.__name__} setting, not {kind.__name__}")
    value = entry.default_value()
    if value is None:
        if computed is None:
            raise TypeError(f"{name}'s default is computed by its reader: pass computed=")
        return computed
    if computed is not None:
        raise TypeError(f"{name}'s default is in the registry; its reader passes none")
    assert isinstance(value, kind)
    return value


def read_str(name: str, *, computed: str | None = None) -> str:
    return env_str(name, _default(name, str, computed))


def read_int(name: str) -> int:
    return env_int(name, _default(name, int, None))


def read_float(name: str) -> float:
    return env_float(name, _default(name, float, None))


def read_bool(name: str, *, computed: bool | None = None) -> bool:
    return env_bool(name, _default(name, bool, computed))


def read_list(name: str, *, computed: list[str] | None = None) -> list[str]:
    # a copy: a caller that changes its list (a test appending to ALLOWED_HOSTS) leaves the registry's alone
    return env_list(name, list(_default(name, list, computed)))
