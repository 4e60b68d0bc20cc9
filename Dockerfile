# hardtests_web: one image for every process (web, janitor, sandbox and generation workers).
#
#   docker build -t hardtests-web .
#   docker compose up -d          (compose.yaml: the whole layout with PostgreSQL, Redis, MinIO)
#
# The sandbox: workers run untrusted programs in bubblewrap, which creates namespaces. Inside a
# container that needs either user namespaces allowed by the host and the container's seccomp
# profile, or the sandbox-worker service given CAP_SYS_ADMIN with seccomp and AppArmor
# unconfined (what compose.yaml does). The sandbox worker runs as root inside its container so
# that it can run every program as `nobody`; the web, the janitor and the generation workers
# run as the unprivileged user `hardtests`.

# -- build: the virtualenv with every Python dependency -----------------------------------------
# Debian's python3 in both stages: the sandbox runs submissions with /usr/bin/python3, and the
# virtualenv built here must run on the same interpreter in the runtime stage.
FROM debian:bookworm-slim AS build
# Settings before the heavy layers: with a copying storage driver (vfs, where overlayfs is not
# available) every instruction copies the whole tree below it, so each one after them costs minutes.
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
WORKDIR /src
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv
# Dependencies first, from the runtime lock (every version pinned; the tests, linters and docs
# are in requirements-dev.lock and stay out of the image): a code change does not reinstall them.
# The apps run from /app; hardtests_client is imported from there too.
COPY requirements.lock ./
RUN pip install --no-deps -r requirements.lock

# -- runtime ----------------------------------------------------------------------------------
FROM debian:bookworm-slim AS runtime
# The image's settings first (as in the build stage: cheap while the tree is small); USER last,
# after the steps that need root.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    DEBUG=0 \
    HARDTESTS_DEMO=0 \
    HARDTESTS_VAR_DIR=/var/lib/hardtests \
    HARDTESTS_STATIC_ROOT=/app/staticfiles \
    HARDTESTS_SANDBOX_CACHE=/var/cache/hardtests-sandbox \
    PORT=8000
WORKDIR /app
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"]
# The draining gunicorn, as compose.yaml and the systemd unit run it.
CMD ["gunicorn", "-c", "python:hardtests_web.ops.gunicorn", "hardtests_web.wsgi"]
# python3: the app and Python submissions; bubblewrap: the sandbox; gcc/g++: the sandbox
# runner (compiled on first use) and C++ submissions; libseccomp-dev: the runner's <seccomp.h>
# and the library it links; the JDK: Java submissions.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 bubblewrap gcc g++ libseccomp-dev openjdk-17-jdk-headless \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 hardtests \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/hardtests hardtests \
    && mkdir -p /var/lib/hardtests /var/cache/hardtests-sandbox \
    && chown hardtests:hardtests /var/lib/hardtests
COPY --from=build /opt/venv /opt/venv
COPY --chown=root:root . /app
# Static files are collected into the image (whitenoise serves them); the key is only for this step.
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && rm -rf /var/lib/hardtests/* \
    && chown hardtests:hardtests /var/lib/hardtests
USER 10001:10001
