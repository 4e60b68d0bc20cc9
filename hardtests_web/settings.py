"""Settings for hardtests_web: one module, environment variables with embedded defaults.

`make run` needs no environment: SQLite under var/, an embedded Redis server, a secret key
generated once into var/, DEBUG off (`serve --dev` turns it on). Production sets
HARDTESTS_DEMO=0, SECRET_KEY, DATABASE_URL and REDIS_URL.
Every variable is declared once, in core/config_registry.py (type, default, doc): values here are
read with its read_* functions, so no default is written twice; scripts/config_docs.py writes
.env.example and docs/configuration.md from it (a test holds them all equal).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.config_registry import FROM_FILE, read_bool, read_float, read_int, read_list, read_str
from core.storage import storage_backend

BASE_DIR = Path(__file__).resolve().parent.parent

# Secrets from files (Docker/compose secrets, systemd credentials): NAME_FILE names a file
# holding NAME's value, so a password never sits in the environment of `docker inspect` or on a
# command line. Put into the environment of this process only, where boto3 and openai read them.
for _name in FROM_FILE:
    _file = os.environ.get(f"{_name}_FILE", "").strip()
    if _file and not os.environ.get(_name):
        os.environ[_name] = Path(_file).read_text().strip()
VAR_DIR = Path(read_str("HARDTESTS_VAR_DIR", computed=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Off unless asked for (`serve --dev` sets DEBUG=1): Django's debug pages list every URL
# pattern and setting to whoever reaches the server.
DEBUG = read_bool("DEBUG")
# Demo mode (the default, what `make run` serves): demo logins exist, a secret key is made
# under var/ when none is given, and cookies work over plain HTTP on loopback.
HARDTESTS_DEMO = read_bool("HARDTESTS_DEMO")


def _secret_key() -> str:
    key = read_str("SECRET_KEY")
    key_file = read_str("SECRET_KEY_FILE")
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
ALLOWED_HOSTS = read_list("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = read_list("CSRF_TRUSTED_ORIGINS")
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
DATABASE_URL = read_str("DATABASE_URL", computed=f"sqlite:///{_SQLITE_PATH}")
# A web thread keeps its connection between requests (checked before reuse): opening one per
# request cost a verification about 2 ms on SQLite, and more on PostgreSQL over TCP.
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=read_int("DB_CONN_MAX_AGE"),
                                              conn_health_checks=True)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        # WAL lets the web process read while a worker writes; IMMEDIATE avoids the
        # upgrade deadlock SQLite hits when two writers start as readers.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": read_int("SQLITE_BUSY_TIMEOUT_S"),
    }
    # A file, not :memory:, so RQ worker processes started by tests see the test database
    # (tests pass its name to them); one per test process, so two sessions never share one.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
else:
    DATABASES["default"].setdefault("TEST", {})

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis and queues. With REDIS_URL unset, an embedded redis-server is started on a
# unix socket under var/ (see core/embedded.py).
REDIS_URL_FROM_ENV = read_str("REDIS_URL")
EMBEDDED_REDIS_DIR = VAR_DIR / "redis"
EMBEDDED_REDIS_SOCKET = EMBEDDED_REDIS_DIR / "redis.sock"
REDIS_URL = REDIS_URL_FROM_ENV or f"unix://{EMBEDDED_REDIS_SOCKET}?db=0"
# Set by `serve` for the processes it starts (not for operators): serve supervises the embedded
# Redis, so they never start one of their own that would outlive it.
EMBEDDED_REDIS_SUPERVISED = read_bool("HARDTESTS_EMBEDDED_REDIS_SUPERVISED")

# `api` (verification requests) comes before `sandbox` (bulk judging) on the sandbox workers.
RQ_QUEUE_NAMES = ["generation", "api", "sandbox", "default"]
RQ_QUEUES = {
    name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": read_int("HARDTESTS_JOB_TIMEOUT_S")}
    for name in RQ_QUEUE_NAMES
}
RQ_SHOW_ADMIN_LINK = True

# The project's own settings, each read from its variable: core/config_registry.py says
# what each means (and docs/configuration.md, written from it).
# Processes.
HARDTESTS_SANDBOX_WORKERS = read_int("HARDTESTS_SANDBOX_WORKERS")
HARDTESTS_GENERATION_WORKERS = read_int("HARDTESTS_GENERATION_WORKERS")
HARDTESTS_LLM_WORKERS = read_int("HARDTESTS_LLM_WORKERS")
HARDTESTS_JANITOR_PERIOD_S = read_float("HARDTESTS_JANITOR_PERIOD_S")
HARDTESTS_WORKER_CHECK_S = read_float("HARDTESTS_WORKER_CHECK_S")
HARDTESTS_WORKER_BEAT_S = read_float("HARDTESTS_WORKER_BEAT_S")
HARDTESTS_WORKER_DEAD_S = read_float("HARDTESTS_WORKER_DEAD_S")
HARDTESTS_JANITOR_FAST_S = read_float("HARDTESTS_JANITOR_FAST_S")
HARDTESTS_API_RESERVED_WORKERS = read_int("HARDTESTS_API_RESERVED_WORKERS")
HARDTESTS_HEALTH_TOKEN = read_str("HARDTESTS_HEALTH_TOKEN")

# Test data: content-addressed and compressed; large bodies are files in the default storage.
# `or`: an empty value (as copied from .env.example) means the default, not the current directory.
MEDIA_ROOT = Path(read_str("HARDTESTS_MEDIA_ROOT") or VAR_DIR / "media")
MEDIA_URL = "/media/"
HARDTESTS_BLOB_INLINE_MAX = read_int("HARDTESTS_BLOB_INLINE_MAX")
HARDTESTS_STORAGE_URL = read_str("HARDTESTS_STORAGE_URL")
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
STATIC_ROOT = Path(read_str("HARDTESTS_STATIC_ROOT") or VAR_DIR / "staticfiles")
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
    SESSION_COOKIE_SECURE = read_bool("SECURE_COOKIES", computed=not HARDTESTS_DEMO)
    CSRF_COOKIE_SECURE = read_bool("SECURE_COOKIES", computed=not HARDTESTS_DEMO)

# The site.
HARDTESTS_PUBLIC_READ = read_bool("HARDTESTS_PUBLIC_READ")

# The LLM: any OpenAI-compatible endpoint.
OPENAI_BASE_URL = read_str("OPENAI_BASE_URL")
OPENAI_API_KEY = read_str("OPENAI_API_KEY")
HARDTESTS_LLM_MODEL = read_str("HARDTESTS_LLM_MODEL")
HARDTESTS_LLM_MODELS = read_list("HARDTESTS_LLM_MODELS", computed=[HARDTESTS_LLM_MODEL])
HARDTESTS_LLM_TEMPERATURE = read_float("HARDTESTS_LLM_TEMPERATURE")
HARDTESTS_LLM_TIMEOUT_S = read_float("HARDTESTS_LLM_TIMEOUT_S")
HARDTESTS_LLM_MAX_RETRIES = read_int("HARDTESTS_LLM_MAX_RETRIES")
HARDTESTS_LLM_CONCURRENCY = read_int("HARDTESTS_LLM_CONCURRENCY")
HARDTESTS_LLM_REPLY_RETRIES = read_int("HARDTESTS_LLM_REPLY_RETRIES")
HARDTESTS_LLM_MAX_TOKENS = read_int("HARDTESTS_LLM_MAX_TOKENS")
HARDTESTS_LLM_REASONING = read_bool("HARDTESTS_LLM_REASONING")

# Generation (HardTestGen) and the oracle-free modes.
HARDTESTS_DIRECT_INPUTS = read_int("HARDTESTS_DIRECT_INPUTS")
HARDTESTS_REGULAR_CALLS = read_int("HARDTESTS_REGULAR_CALLS")
HARDTESTS_STRATIFIED_CALLS = read_int("HARDTESTS_STRATIFIED_CALLS")
HARDTESTS_HACKING_CALLS = read_int("HARDTESTS_HACKING_CALLS")
HARDTESTS_MAX_ORACLES = read_int("HARDTESTS_MAX_ORACLES")
HARDTESTS_ORACLE_AGREEMENT = read_float("HARDTESTS_ORACLE_AGREEMENT")
HARDTESTS_MIN_ORACLES = read_int("HARDTESTS_MIN_ORACLES")
HARDTESTS_VALIDATOR_ERROR_SHARE = read_float("HARDTESTS_VALIDATOR_ERROR_SHARE")
HARDTESTS_REPAIR_ROUNDS = read_int("HARDTESTS_REPAIR_ROUNDS")
HARDTESTS_CHECKER_REVIEW = read_bool("HARDTESTS_CHECKER_REVIEW")
HARDTESTS_REPAIR_PROBE_CALLS = read_int("HARDTESTS_REPAIR_PROBE_CALLS")
HARDTESTS_REFINE_ALPHA = read_float("HARDTESTS_REFINE_ALPHA")
HARDTESTS_REFINE_BETA = read_float("HARDTESTS_REFINE_BETA")
HARDTESTS_REFINE_MAX_ROUNDS = read_int("HARDTESTS_REFINE_MAX_ROUNDS")
HARDTESTS_HELDOUT_SHARE = read_float("HARDTESTS_HELDOUT_SHARE")
HARDTESTS_SPLIT_MIN_CANDIDATES = read_int("HARDTESTS_SPLIT_MIN_CANDIDATES")
HARDTESTS_INPUT_BUDGET_S = read_float("HARDTESTS_INPUT_BUDGET_S")
HARDTESTS_OUTPUT_BUDGET_S = read_float("HARDTESTS_OUTPUT_BUDGET_S")
HARDTESTS_SUITE_MAX_MB = read_float("HARDTESTS_SUITE_MAX_MB")
HARDTESTS_ORACLE_FREE_AUTO = read_bool("HARDTESTS_ORACLE_FREE_AUTO")
HARDTESTS_ORACLE_FREE_EDGE_CALLS = read_int("HARDTESTS_ORACLE_FREE_EDGE_CALLS")
HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE = read_bool("HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE")
HARDTESTS_BRUTE_FORCE_TIME_S = read_float("HARDTESTS_BRUTE_FORCE_TIME_S")
HARDTESTS_ACECODER_TESTS = read_int("HARDTESTS_ACECODER_TESTS")
HARDTESTS_ACECODER_MIN_TESTS = read_int("HARDTESTS_ACECODER_MIN_TESTS")
HARDTESTS_ACECODER_SOLUTION_MODEL = read_str("HARDTESTS_ACECODER_SOLUTION_MODEL")
HARDTESTS_GENERATOR_TIME_S = read_float("HARDTESTS_GENERATOR_TIME_S")
HARDTESTS_GENERATOR_MEMORY_MB = read_int("HARDTESTS_GENERATOR_MEMORY_MB")
HARDTESTS_REPRODUCIBLE_CHECK_CALLS = read_int("HARDTESTS_REPRODUCIBLE_CHECK_CALLS")
HARDTESTS_BATCH_GENERATOR_TIME_S = read_float("HARDTESTS_BATCH_GENERATOR_TIME_S")
HARDTESTS_CHECKER_TIME_S = read_float("HARDTESTS_CHECKER_TIME_S")
HARDTESTS_CHECKER_MEMORY_MB = read_int("HARDTESTS_CHECKER_MEMORY_MB")
HARDTESTS_ORACLE_TIME_FACTOR = read_float("HARDTESTS_ORACLE_TIME_FACTOR")
HARDTESTS_MATERIALISE_THREADS = read_int("HARDTESTS_MATERIALISE_THREADS")
HARDTESTS_RUN_STALE_S = read_float("HARDTESTS_RUN_STALE_S")

# Campaigns.
HARDTESTS_LLM_IN_FLIGHT = read_int("HARDTESTS_LLM_IN_FLIGHT")
HARDTESTS_LLM_STAGE_THREADS = read_int("HARDTESTS_LLM_STAGE_THREADS")
HARDTESTS_LLM_RPM = read_int("HARDTESTS_LLM_RPM")
HARDTESTS_LLM_TPM = read_int("HARDTESTS_LLM_TPM")
HARDTESTS_LLM_RATE_LIMITS = read_list("HARDTESTS_LLM_RATE_LIMITS")
HARDTESTS_LLM_PRICES = read_list("HARDTESTS_LLM_PRICES")
HARDTESTS_CAMPAIGN_BACKOFF_S = read_float("HARDTESTS_CAMPAIGN_BACKOFF_S")
HARDTESTS_LLM_UNAVAILABLE_AFTER_S = read_float("HARDTESTS_LLM_UNAVAILABLE_AFTER_S")

# Verification API (read through api/conf.py).
HARDTESTS_API_RATE_LIMIT = read_int("HARDTESTS_API_RATE_LIMIT")
HARDTESTS_API_MAX_CODE_KB = read_int("HARDTESTS_API_MAX_CODE_KB")
HARDTESTS_API_MAX_BODY_KB = read_int("HARDTESTS_API_MAX_BODY_KB")
HARDTESTS_API_SYNC_TIMEOUT_S = read_int("HARDTESTS_API_SYNC_TIMEOUT_S")
HARDTESTS_API_BATCH_MAX = read_int("HARDTESTS_API_BATCH_MAX")
HARDTESTS_API_QUEUE_MAX = read_int("HARDTESTS_API_QUEUE_MAX")
HARDTESTS_API_JOB_TIMEOUT_S = read_int("HARDTESTS_API_JOB_TIMEOUT_S")
HARDTESTS_API_RESULT_TTL_S = read_int("HARDTESTS_API_RESULT_TTL_S")
HARDTESTS_API_VERDICT_CACHE_S = read_int("HARDTESTS_API_VERDICT_CACHE_S")
HARDTESTS_API_HANDOFF = read_bool("HARDTESTS_API_HANDOFF")
HARDTESTS_SANDBOXFUSION_PREFIX = read_str("HARDTESTS_SANDBOXFUSION_PREFIX")
HARDTESTS_API_URL_TOKENS = read_bool("HARDTESTS_API_URL_TOKENS")
HARDTESTS_API_TRUSTED_NETWORKS = read_list("HARDTESTS_API_TRUSTED_NETWORKS")
HARDTESTS_RUN_CODE_MAX_TIME_S = read_int("HARDTESTS_RUN_CODE_MAX_TIME_S")
HARDTESTS_RUN_CODE_MAX_MEMORY_MB = read_int("HARDTESTS_RUN_CODE_MAX_MEMORY_MB")

# Judging and kill order. (The sandbox reads its own HARDTESTS_SANDBOX_* and HARDTESTS_COMPILE_*
# variables: it imports nothing of the project. The registry declares them all the same.)
HARDTESTS_JUDGE_PARALLEL = read_int("HARDTESTS_JUDGE_PARALLEL")
HARDTESTS_JUDGE_ADMISSION = read_bool("HARDTESTS_JUDGE_ADMISSION")
HARDTESTS_STARVED_RERUNS = read_int("HARDTESTS_STARVED_RERUNS")
HARDTESTS_TESTLIB_H = read_str("HARDTESTS_TESTLIB_H")
HARDTESTS_KILL_ORDER = read_bool("HARDTESTS_KILL_ORDER")
HARDTESTS_KILL_ORDER_MIN_KILLS = read_int("HARDTESTS_KILL_ORDER_MIN_KILLS")
HARDTESTS_KILL_ORDER_FROM_API = read_bool("HARDTESTS_KILL_ORDER_FROM_API")
HARDTESTS_KILL_ORDER_FROM_CURATION = read_bool("HARDTESTS_KILL_ORDER_FROM_CURATION")
HARDTESTS_KILL_ORDER_REFRESH_S = read_int("HARDTESTS_KILL_ORDER_REFRESH_S")
HARDTESTS_FAST_SUITES = read_bool("HARDTESTS_FAST_SUITES")

# Curation.
HARDTESTS_CURATION_CHUNK = read_int("HARDTESTS_CURATION_CHUNK")
HARDTESTS_CURATION_CHAINS = read_int("HARDTESTS_CURATION_CHAINS")
HARDTESTS_CURATION_QUEUE = read_str("HARDTESTS_CURATION_QUEUE")
HARDTESTS_CURATION_STALE_S = read_float("HARDTESTS_CURATION_STALE_S")
HARDTESTS_CURATION_JUDGE_PARALLEL = read_int("HARDTESTS_CURATION_JUDGE_PARALLEL")
HARDTESTS_CURATION_DEDUP = read_bool("HARDTESTS_CURATION_DEDUP")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Tokens sent in URL paths (HARDTESTS_API_URL_TOKENS) never reach the logs.
    "filters": {"path_tokens": {"()": "hardtests_web.log_redact.PathTokenFilter"},
                # A refusal (403, 404, 405) is an answer, not a failure: one line, no traceback.
                "expected_refusals": {"()": "hardtests_web.log_filters.RefusalFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["path_tokens"]}},
    "root": {"handlers": ["console"], "level": read_str("LOG_LEVEL")},
    "loggers": {"django.db.backends": {"level": "WARNING"},
                "django.request": {"filters": ["expected_refusals"]},
                "django.security": {"filters": ["expected_refusals"]}},
}
