"""Settings for hardtests_web: one module, environment variables with embedded defaults.

`make run` needs no environment: SQLite under var/, an embedded Redis server, a secret key
generated once into var/, DEBUG off (`serve --dev` turns it on). Production sets
HARDTESTS_DEMO=0, SECRET_KEY, DATABASE_URL and REDIS_URL.
Every variable read here is listed in .env.example and in docs/configuration.md (a test holds the three equal).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_float, env_int, env_list, env_str
from core.storage import storage_backend

BASE_DIR = Path(__file__).resolve().parent.parent

# Secrets from files (Docker/compose secrets, systemd credentials): NAME_FILE names a file
# holding NAME's value, so a password never sits in the environment of `docker inspect` or on a
# command line. Put into the environment of this process only, where boto3 and openai read them.
for _name in ("DATABASE_URL", "REDIS_URL", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "HARDTESTS_HEALTH_TOKEN"):
    _file = os.environ.get(f"{_name}_FILE", "").strip()
    if _file and not os.environ.get(_name):
        os.environ[_name] = Path(_file).read_text().strip()
VAR_DIR = Path(env_str("HARDTESTS_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Off unless asked for (`serve --dev` sets DEBUG=1): Django's debug pages list every URL
# pattern and setting to whoever reaches the server.
DEBUG = env_bool("DEBUG", False)
# Demo mode (the default, what `make run` serves): demo logins exist, a secret key is made
# under var/ when none is given, and cookies work over plain HTTP on loopback.
HARDTESTS_DEMO = env_bool("HARDTESTS_DEMO", True)


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    key_file = env_str("SECRET_KEY_FILE")
    if key:
        return key
    if key_file:
        return Path(key_file).read_text().strip()
    if not DEBUG and not HARDTESTS_DEMO:
        raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG=0 and HARDTESTS_DEMO=0")
    # Development and the demo: generate once and keep it, so sessions survive restarts.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# The site's own page for a refused form (a stale tab after logging out and in): what happened,
# and what was typed, kept.
CSRF_FAILURE_VIEW = "hardtests_web.views.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "django_rq",
    "csp",
    "hardtests_web",
    "problems",
    "generation",
    "review",
    "curation",
    "api",
]

# No inline scripts anywhere: every script is a file under static/. Inline style attributes are
# allowed because KaTeX and the server-side SVG charts emit them.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        # django-rq's staff dashboard had the one inline script; templates/django_rq/ replaces it.
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
SECURE_REFERRER_POLICY = "same-origin"

MIDDLEWARE = [
    "hardtests_web.ops.chunked.ChunkedBodyMiddleware",  # before anything reads the body
    "hardtests_web.ops.errors.OutageMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    "hardtests_web.middleware.LoginRequiredUnlessPublicMiddleware",
    "hardtests_web.middleware.MethodNotAllowedPageMiddleware",
]

ROOT_URLCONF = "hardtests_web.urls"
WSGI_APPLICATION = "hardtests_web.wsgi.application"
ASGI_APPLICATION = "hardtests_web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "hardtests_web.context_processors.site",
                "problems.context_processors.demo_build",
            ],
        },
    }
]

# Database: SQLite (WAL, busy timeout) unless DATABASE_URL says otherwise.
_SQLITE_PATH = VAR_DIR / "db.sqlite3"
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{_SQLITE_PATH}")
# A web thread keeps its connection between requests (checked before reuse): opening one per
# request cost a verification about 2 ms on SQLite, and more on PostgreSQL over TCP.
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
                                              conn_health_checks=True)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        # WAL lets the web process read while a worker writes; IMMEDIATE avoids the
        # upgrade deadlock SQLite hits when two writers start as readers.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("SQLITE_BUSY_TIMEOUT_S", 30),
    }
    # A file, not :memory:, so RQ worker processes started by tests see the test database
    # (tests pass its name to them); one per test process, so two sessions never share one.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
else:
    DATABASES["default"].setdefault("TEST", {})

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis and queues. With REDIS_URL unset, an embedded redis-server is started on a
# unix socket under var/ (see core/embedded.py).
REDIS_URL_FROM_ENV = env_str("REDIS_URL")
EMBEDDED_REDIS_DIR = VAR_DIR / "redis"
EMBEDDED_REDIS_SOCKET = EMBEDDED_REDIS_DIR / "redis.sock"
REDIS_URL = REDIS_URL_FROM_ENV or f"unix://{EMBEDDED_REDIS_SOCKET}?db=0"
# Set by `serve` for the processes it starts (not for operators): serve supervises the embedded
# Redis, so they never start one of their own that would outlive it.
EMBEDDED_REDIS_SUPERVISED = env_bool("HARDTESTS_EMBEDDED_REDIS_SUPERVISED", False)

# `api` (verification requests) comes before `sandbox` (bulk judging) on the sandbox workers.
RQ_QUEUE_NAMES = ["generation", "api", "sandbox", "default"]
RQ_QUEUES = {
    name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": env_int("HARDTESTS_JOB_TIMEOUT_S", 3600)}
    for name in RQ_QUEUE_NAMES
}
RQ_SHOW_ADMIN_LINK = True
HARDTESTS_SANDBOX_WORKERS = env_int("HARDTESTS_SANDBOX_WORKERS", 2)
HARDTESTS_GENERATION_WORKERS = env_int("HARDTESTS_GENERATION_WORKERS", 1)
# `llm_worker` processes (the LLM stage of campaigns) that `serve` starts; 0: none.
HARDTESTS_LLM_WORKERS = env_int("HARDTESTS_LLM_WORKERS", 1)
# Seconds between the janitor's passes (dead runs and judging tasks, expired jobs).
HARDTESTS_JANITOR_PERIOD_S = env_float("HARDTESTS_JANITOR_PERIOD_S", 60.0)
# Seconds between a sandbox worker's checks that it can reach the database and read the
# test storage (hardtests_web/ops/worker.py); while one fails it takes no job.
HARDTESTS_WORKER_CHECK_S = env_float("HARDTESTS_WORKER_CHECK_S", 30.0)
# A checked worker renews its record this often from a thread of its own (even mid-job), and
# counts as dead once it is this old: the API then answers `no_workers` instead of waiting, and
# the janitor (or `serve`) takes the dead worker off RQ's lists and queues its job again.
HARDTESTS_WORKER_BEAT_S = env_float("HARDTESTS_WORKER_BEAT_S", 5.0)
HARDTESTS_WORKER_DEAD_S = env_float("HARDTESTS_WORKER_DEAD_S", 20.0)
# Seconds between the janitor's look for dead workers (cheap: two Redis reads).
HARDTESTS_JANITOR_FAST_S = env_float("HARDTESTS_JANITOR_FAST_S", 10.0)
# Sandbox workers `serve` reserves for the verification API (they never take a bulk judging
# job, so a verification never waits behind one); the rest take `api` first, then `sandbox`.
# Only when `serve` starts more than one sandbox worker.
HARDTESTS_API_RESERVED_WORKERS = env_int("HARDTESTS_API_RESERVED_WORKERS", 1)
# Bearer token that opens /healthz/deep to monitoring without a staff login (empty: staff only).
HARDTESTS_HEALTH_TOKEN = env_str("HARDTESTS_HEALTH_TOKEN")

# Test data: content-addressed and compressed; large bodies are files in the default storage.
# `or`: an empty value (as copied from .env.example) means the default, not the current directory.
MEDIA_ROOT = Path(env_str("HARDTESTS_MEDIA_ROOT") or VAR_DIR / "media")
MEDIA_URL = "/media/"
# A body whose compressed size is at most this many bytes lives in its Blob row instead of a
# file of its own: creating one file per small body made the kernel the bottleneck of imports.
# 0 keeps every body in a file.
HARDTESTS_BLOB_INLINE_MAX = env_int("HARDTESTS_BLOB_INLINE_MAX", 16384)
# Where those files live: this machine's MEDIA_ROOT (default), another directory, or
# s3://bucket/prefix (core/storage.py). Workers on other machines need a shared one.
HARDTESTS_STORAGE_URL = env_str("HARDTESTS_STORAGE_URL")
STORAGES = {
    "default": storage_backend(HARDTESTS_STORAGE_URL),
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# collectstatic's output; a container image keeps it outside the (mounted) var directory.
STATIC_ROOT = Path(env_str("HARDTESTS_STATIC_ROOT") or VAR_DIR / "staticfiles")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# In development whitenoise serves straight from static/, no collectstatic needed.
# The demo is served without collectstatic (make run); production images collect them.
WHITENOISE_USE_FINDERS = DEBUG or HARDTESTS_DEMO
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "login"
LOGIN_URL_PATH = "/accounts/login/"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
if not DEBUG:
    # The demo is served over plain HTTP on loopback; everything else behind HTTPS.
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not HARDTESTS_DEMO)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", not HARDTESTS_DEMO)

# Product settings.
HARDTESTS_PUBLIC_READ = env_bool("HARDTESTS_PUBLIC_READ", False)

# LLM: any OpenAI-compatible endpoint.
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
HARDTESTS_LLM_MODEL = env_str("HARDTESTS_LLM_MODEL", "gpt-4o")
HARDTESTS_LLM_MODELS = env_list("HARDTESTS_LLM_MODELS", [HARDTESTS_LLM_MODEL])
HARDTESTS_LLM_TEMPERATURE = env_float("HARDTESTS_LLM_TEMPERATURE", 0.2)
HARDTESTS_LLM_TIMEOUT_S = env_float("HARDTESTS_LLM_TIMEOUT_S", 300.0)
HARDTESTS_LLM_MAX_RETRIES = env_int("HARDTESTS_LLM_MAX_RETRIES", 4)
HARDTESTS_LLM_CONCURRENCY = env_int("HARDTESTS_LLM_CONCURRENCY", 32)
HARDTESTS_LLM_REPLY_RETRIES = env_int("HARDTESTS_LLM_REPLY_RETRIES", 1)
# Completion budget sent with every call; a reply cut off by it is fed back as "shorten it".
HARDTESTS_LLM_MAX_TOKENS = env_int("HARDTESTS_LLM_MAX_TOKENS", 16384)
# Reasoning models (o1/o3, R1-style): no temperature is sent and the budget goes as max_completion_tokens.
HARDTESTS_LLM_REASONING = env_bool("HARDTESTS_LLM_REASONING", False)

# HardTestGen counts (paper defaults).
HARDTESTS_DIRECT_INPUTS = env_int("HARDTESTS_DIRECT_INPUTS", 10)
HARDTESTS_REGULAR_CALLS = env_int("HARDTESTS_REGULAR_CALLS", 20)
HARDTESTS_STRATIFIED_CALLS = env_int("HARDTESTS_STRATIFIED_CALLS", 10)
HARDTESTS_HACKING_CALLS = env_int("HARDTESTS_HACKING_CALLS", 10)
HARDTESTS_MAX_ORACLES = env_int("HARDTESTS_MAX_ORACLES", 8)
HARDTESTS_ORACLE_AGREEMENT = env_float("HARDTESTS_ORACLE_AGREEMENT", 0.9)
# Oracles that must compile and pass the samples before any LLM call; at 1 a single-oracle
# suite is allowed and marked unverified.
HARDTESTS_MIN_ORACLES = env_int("HARDTESTS_MIN_ORACLES", 2)
# A run fails (validator_error) when the validator crashes or times out on more than this share of inputs.
HARDTESTS_VALIDATOR_ERROR_SHARE = env_float("HARDTESTS_VALIDATOR_ERROR_SHARE", 0.1)
# Refinement (generation.refine): generator repair rounds, the CodeContests-O feedback loop
# (stop when TPR >= alpha and TNR >= beta, or after max rounds) and the tuning/held-out split.
HARDTESTS_REPAIR_ROUNDS = env_int("HARDTESTS_REPAIR_ROUNDS", 3)
# After call 2: the LLM reviews its validator and judge against concrete cases (samples, oracle outputs, inputs).
HARDTESTS_CHECKER_REVIEW = env_bool("HARDTESTS_CHECKER_REVIEW", True)
HARDTESTS_REPAIR_PROBE_CALLS = env_int("HARDTESTS_REPAIR_PROBE_CALLS", 2)
HARDTESTS_REFINE_ALPHA = env_float("HARDTESTS_REFINE_ALPHA", 0.95)
HARDTESTS_REFINE_BETA = env_float("HARDTESTS_REFINE_BETA", 0.90)
HARDTESTS_REFINE_MAX_ROUNDS = env_int("HARDTESTS_REFINE_MAX_ROUNDS", 3)
HARDTESTS_HELDOUT_SHARE = env_float("HARDTESTS_HELDOUT_SHARE", 0.3)
HARDTESTS_SPLIT_MIN_CANDIDATES = env_int("HARDTESTS_SPLIT_MIN_CANDIDATES", 6)
# Per-problem budgets of one materialisation (HardTestGen uses about 180 s, 240 s and 500 MB).
HARDTESTS_INPUT_BUDGET_S = env_float("HARDTESTS_INPUT_BUDGET_S", 180.0)
HARDTESTS_OUTPUT_BUDGET_S = env_float("HARDTESTS_OUTPUT_BUDGET_S", 240.0)
HARDTESTS_SUITE_MAX_MB = env_float("HARDTESTS_SUITE_MAX_MB", 500.0)
# Oracle-free modes (generation/oracle_free, docs/oracle-free.md). A from-scratch run of a problem
# with no oracle in a supported language becomes an oracle-free (A.7) run when AUTO is on.
HARDTESTS_ORACLE_FREE_AUTO = env_bool("HARDTESTS_ORACLE_FREE_AUTO", True)
HARDTESTS_ORACLE_FREE_EDGE_CALLS = env_int("HARDTESTS_ORACLE_FREE_EDGE_CALLS", 2)
HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE = env_bool("HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE", True)
HARDTESTS_BRUTE_FORCE_TIME_S = env_float("HARDTESTS_BRUTE_FORCE_TIME_S", 10.0)
HARDTESTS_ACECODER_TESTS = env_int("HARDTESTS_ACECODER_TESTS", 20)
HARDTESTS_ACECODER_MIN_TESTS = env_int("HARDTESTS_ACECODER_MIN_TESTS", 5)
# The model that writes AceCoder's filtering solution (the paper: a stronger one); empty: the run's model.
HARDTESTS_ACECODER_SOLUTION_MODEL = env_str("HARDTESTS_ACECODER_SOLUTION_MODEL", "")
# Per-call limits of untrusted LLM-written code during materialisation.
HARDTESTS_GENERATOR_TIME_S = env_float("HARDTESTS_GENERATOR_TIME_S", 10.0)
HARDTESTS_GENERATOR_MEMORY_MB = env_int("HARDTESTS_GENERATOR_MEMORY_MB", 1024)
HARDTESTS_REPRODUCIBLE_CHECK_CALLS = env_int("HARDTESTS_REPRODUCIBLE_CHECK_CALLS", 2)
HARDTESTS_BATCH_GENERATOR_TIME_S = env_float("HARDTESTS_BATCH_GENERATOR_TIME_S", 120.0)
# Validators and judging functions, everywhere: materialisation, judging, the API, studies.
HARDTESTS_CHECKER_TIME_S = env_float("HARDTESTS_CHECKER_TIME_S", 10.0)
HARDTESTS_CHECKER_MEMORY_MB = env_int("HARDTESTS_CHECKER_MEMORY_MB", 1024)
# Oracles get this multiple of the problem's time limit (they are trusted to be correct, not fast).
HARDTESTS_ORACLE_TIME_FACTOR = env_float("HARDTESTS_ORACLE_TIME_FACTOR", 2.0)
HARDTESTS_MATERIALISE_THREADS = env_int("HARDTESTS_MATERIALISE_THREADS", min(4, os.cpu_count() or 1))
# A running generation run whose heartbeat is older than this is declared dead.
HARDTESTS_RUN_STALE_S = env_float("HARDTESTS_RUN_STALE_S", 120.0)

# Campaigns (generation over a whole dataset; docs: generation).
# LLM calls in flight per `llm_worker` process (threads waiting on the network).
HARDTESTS_LLM_IN_FLIGHT = env_int("HARDTESTS_LLM_IN_FLIGHT", 32)
# Threads per `llm_worker` (0: twice HARDTESTS_LLM_IN_FLIGHT): the extra ones do a run's CPU work
# (pre-flight, validator review, saving) while the others' calls wait on the network.
HARDTESTS_LLM_STAGE_THREADS = env_int("HARDTESTS_LLM_STAGE_THREADS", 0)
# Shared token buckets in Redis, per model: requests and tokens per minute (0: no limit);
# HARDTESTS_LLM_RATE_LIMITS overrides per model as MODEL=RPM:TPM,...
HARDTESTS_LLM_RPM = env_int("HARDTESTS_LLM_RPM", 0)
HARDTESTS_LLM_TPM = env_int("HARDTESTS_LLM_TPM", 0)
HARDTESTS_LLM_RATE_LIMITS = env_list("HARDTESTS_LLM_RATE_LIMITS", [])
# USD per million tokens, MODEL=PROMPT:COMPLETION,... (a model not listed costs 0).
HARDTESTS_LLM_PRICES = env_list("HARDTESTS_LLM_PRICES", ["gpt-4o=2.5:10", "gpt-4o-mini=0.15:0.6"])
# A campaign run whose LLM calls keep failing (429, 5xx, timeouts) goes back to the queue with
# backoff (first delay below, doubled, capped at 5 minutes) and fails as llm_unavailable only
# once it has been waiting this long in total.
HARDTESTS_CAMPAIGN_BACKOFF_S = env_float("HARDTESTS_CAMPAIGN_BACKOFF_S", 10.0)
HARDTESTS_LLM_UNAVAILABLE_AFTER_S = env_float("HARDTESTS_LLM_UNAVAILABLE_AFTER_S", 1800.0)

# Verification API (api/conf.py documents each).
HARDTESTS_API_RATE_LIMIT = env_int("HARDTESTS_API_RATE_LIMIT", 600)
HARDTESTS_API_MAX_CODE_KB = env_int("HARDTESTS_API_MAX_CODE_KB", 64)
HARDTESTS_API_MAX_BODY_KB = env_int("HARDTESTS_API_MAX_BODY_KB", 2048)
HARDTESTS_API_SYNC_TIMEOUT_S = env_int("HARDTESTS_API_SYNC_TIMEOUT_S", 60)
HARDTESTS_API_BATCH_MAX = env_int("HARDTESTS_API_BATCH_MAX", 32)
HARDTESTS_API_QUEUE_MAX = env_int("HARDTESTS_API_QUEUE_MAX", 1000)
HARDTESTS_API_JOB_TIMEOUT_S = env_int("HARDTESTS_API_JOB_TIMEOUT_S", 600)
HARDTESTS_API_RESULT_TTL_S = env_int("HARDTESTS_API_RESULT_TTL_S", 3600)
HARDTESTS_API_VERDICT_CACHE_S = env_int("HARDTESTS_API_VERDICT_CACHE_S", 300)
# Clients that cannot send an Authorization header (SandboxFusion's client, verl's
# sandbox_fusion reward, OpenRLHF's remote reward): both ways in are off by default.
# The SandboxFusion-compatible /run_code and /submit live under this URL prefix.
HARDTESTS_SANDBOXFUSION_PREFIX = env_str("HARDTESTS_SANDBOXFUSION_PREFIX", "sandboxfusion/")
# Accept an API token as a path segment: <prefix>t/<token>/run_code, /api/v1/openrlhf/t/<token>/reward.
HARDTESTS_API_URL_TOKENS = env_bool("HARDTESTS_API_URL_TOKENS", False)
# Networks (CIDR, comma-separated) whose requests need no token at all on those endpoints.
HARDTESTS_API_TRUSTED_NETWORKS = env_list("HARDTESTS_API_TRUSTED_NETWORKS", [])
# Most CPU seconds and MiB one POST /run_code may ask for.
HARDTESTS_RUN_CODE_MAX_TIME_S = env_int("HARDTESTS_RUN_CODE_MAX_TIME_S", 20)
HARDTESTS_RUN_CODE_MAX_MEMORY_MB = env_int("HARDTESTS_RUN_CODE_MAX_MEMORY_MB", 2048)

# Sandbox (the sandbox package reads its own HARDTESTS_SANDBOX_* variables too).
HARDTESTS_SANDBOX_BACKEND = env_str("HARDTESTS_SANDBOX_BACKEND", "bwrap")
# read by sandbox/cache.py from the environment (the sandbox imports no Django); listed here to be typed
HARDTESTS_COMPILE_CACHE_MAX_MB = env_int("HARDTESTS_COMPILE_CACHE_MAX_MB", 2048)
HARDTESTS_COMPILE_MAX_ARTIFACT_MB = env_int("HARDTESTS_COMPILE_MAX_ARTIFACT_MB", 256)
# Where compiles write and what sandboxes bind comes from (empty: a temporary directory on the
# compile cache's filesystem, else /dev/shm); read by sandbox/cache.py from the environment too.
HARDTESTS_SANDBOX_WORK_DIR = env_str("HARDTESTS_SANDBOX_WORK_DIR", "")
# Sandbox batches one verification's tests are split across (1: one after another).
HARDTESTS_JUDGE_PARALLEL = env_int("HARDTESTS_JUDGE_PARALLEL", os.cpu_count() or 1)
# The verification and /run_code jobs of one host run at most one test per usable CPU between
# them (CPU slots held with flock under the var dir); off: each job runs its lanes at once.
HARDTESTS_JUDGE_ADMISSION = env_bool("HARDTESTS_JUDGE_ADMISSION", True)
# A verification answered SE because the machine withheld the CPU is judged again by its worker
# this many times (backoff with jitter, each at a calmer moment) before the SE goes out.
HARDTESTS_STARVED_RERUNS = env_int("HARDTESTS_STARVED_RERUNS", 3)
# testlib.h for kits and packages whose programs use testlib and bring no header of their own
# (empty: such a kit or package is refused with that reason before anything runs).
HARDTESTS_TESTLIB_H = env_str("HARDTESTS_TESTLIB_H", "")
# Judge tests in each suite's kill order (the tests that fail known-wrong programs first) rather
# than by kind; and serve `suite=fast` (the kill matrix's set cover) rather than the full suite.
HARDTESTS_KILL_ORDER = env_bool("HARDTESTS_KILL_ORDER", True)
# A test moves ahead of kind order when it fails at least this many known-wrong programs.
HARDTESTS_KILL_ORDER_MIN_KILLS = env_int("HARDTESTS_KILL_ORDER_MIN_KILLS", 2)
# What else teaches the kill order, beside the known-wrong candidates' verdicts: the tests a
# verification sent to the API failed (opt-in: a row a failing call), and a curation job's;
# from the API's a suite's order is computed again at most every HARDTESTS_KILL_ORDER_REFRESH_S
# (a curation job's: at each chunk's end).
HARDTESTS_KILL_ORDER_FROM_API = env_bool("HARDTESTS_KILL_ORDER_FROM_API", False)
HARDTESTS_KILL_ORDER_FROM_CURATION = env_bool("HARDTESTS_KILL_ORDER_FROM_CURATION", True)
HARDTESTS_KILL_ORDER_REFRESH_S = env_int("HARDTESTS_KILL_ORDER_REFRESH_S", 60)
HARDTESTS_FAST_SUITES = env_bool("HARDTESTS_FAST_SUITES", True)
# Curation (curation/): completions verified per RQ job (a bounded chunk, so API jobs are not
# starved), chunk chains queued per job, the queue, and when a claimed completion counts as lost.
HARDTESTS_CURATION_CHUNK = env_int("HARDTESTS_CURATION_CHUNK", 16)
HARDTESTS_CURATION_CHAINS = env_int("HARDTESTS_CURATION_CHAINS", 2)
HARDTESTS_CURATION_QUEUE = env_str("HARDTESTS_CURATION_QUEUE", "sandbox")
HARDTESTS_CURATION_STALE_S = env_float("HARDTESTS_CURATION_STALE_S", 900.0)
# Sandbox batches per program in a curation job; 0: HARDTESTS_JUDGE_PARALLEL, as the API judges. 1 saves
# a sandbox start-up per program where the chains alone keep every core busy (a dedicated machine).
HARDTESTS_CURATION_JUDGE_PARALLEL = env_int("HARDTESTS_CURATION_JUDGE_PARALLEL", 0)
# A completion whose program (problem, language, code) was already verified in its job copies
# that verdict instead of running again; 0 verifies every completion.
HARDTESTS_CURATION_DEDUP = env_bool("HARDTESTS_CURATION_DEDUP", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Tokens sent in URL paths (HARDTESTS_API_URL_TOKENS) never reach the logs.
    "filters": {"path_tokens": {"()": "hardtests_web.log_redact.PathTokenFilter"},
                # A refusal (403, 404, 405) is an answer, not a failure: one line, no traceback.
                "expected_refusals": {"()": "hardtests_web.log_filters.RefusalFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["path_tokens"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"},
                "django.request": {"filters": ["expected_refusals"]},
                "django.security": {"filters": ["expected_refusals"]}},
}
