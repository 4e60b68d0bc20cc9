#!/usr/bin/env bash
# Build the Docker image and smoke-test it: a manual, opt-in step (docs/deployment.md); `make test`
# never starts a Docker engine.
#
#   scripts/docker_smoke.sh [--build-only] [--no-build] [--prune]
#
# 1. Needs a running Docker engine (DOCKER_HOST is honoured).
# 2. The base image: debian:bookworm-slim as it is, else pulled, else made here from the Debian
#    mirror with debootstrap (needs root) and imported under that name. CA_BUNDLE (default:
#    $PIP_CERT) goes into that locally made base with an /etc/pip.conf naming it, for pip behind
#    a TLS-intercepting proxy; the Dockerfile stays the same.
# 3. `docker build --network host` (the legacy builder: apt-get and pip reach the mirrors through
#    the host's network even when the engine has no bridge).
# 4. The smoke test, every container on the host network (--network host), a fresh named volume as
#    the var directory, a throwaway Redis (the host's redis-server) on a free loopback port:
#    migrate, `check --deploy`, the demo problems and one staff user; the web (the image's own
#    command: gunicorn as the unprivileged user) answers /healthz on 127.0.0.1:$PORT, serves a
#    collected static file and reports healthy to Docker; a verify worker as compose.yaml runs it
#    (root, CAP_SYS_ADMIN, seccomp and AppArmor unconfined) passes its healthcheck and /healthz/deep;
#    programs with known verdicts go through the verification API with the Python client inside
#    the web container (Python, C++ and Java: bubblewrap, the seccomp runner, g++ and the JDK);
#    the worker needs three settings beyond compose.yaml's (below, at its `docker run`);
#    the web stops cleanly on SIGTERM.
#
# Every container, the volume and the Redis are removed at the end, whatever happened; the image
# stays. Exits non-zero with "docker_smoke: FAILED: <reason>" on the first failure.
#
# Environment: IMAGE (default hardtests-web:latest), PORT (default: a free one), DEBIAN_MIRROR
# (default http://deb.debian.org/debian), CA_BUNDLE, DOCKER_HOST.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${IMAGE:-hardtests-web:latest}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CA_BUNDLE=${CA_BUNDLE:-${PIP_CERT:-}}
BASE=$(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]\{1,\}\).*/\1/p' "$REPO/Dockerfile" | head -n 1)
SUITE=${BASE#*:}
SUITE=${SUITE%%-*}  # bookworm-slim -> bookworm
BUILD=1 SMOKE=1 PRUNE=0
for arg in "$@"; do
    case $arg in
        --build-only) SMOKE=0 ;;
        --no-build) BUILD=0 ;;
        --prune) PRUNE=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "docker_smoke: unknown argument $arg (see --help)" >&2; exit 2 ;;
    esac
done

say() { printf 'docker_smoke: %s\n' "$*"; }
fail() { printf 'docker_smoke: FAILED: %s\n' "$*" >&2; exit 1; }
now() { date +%s; }

WORK=$(mktemp -d /tmp/hardtests-docker-smoke.XXXXXX)
chmod 700 "$WORK"
TAG=hardtests-smoke-$$
CONTAINERS=()
VOLUME=""
REDIS_PID=""
ROOTFS=""
cleanup() {
    local status=$?
    for c in "${CONTAINERS[@]}"; do
        docker rm -f "$c" >/dev/null 2>&1 || true
    done
    [ -n "$VOLUME" ] && { docker volume rm -f "$VOLUME" >/dev/null 2>&1 || true; }
    [ -n "$REDIS_PID" ] && { kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; }
    [ -n "$ROOTFS" ] && rm -rf "$ROOTFS"
    rm -rf "$WORK"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v docker >/dev/null || fail "the docker client is not installed"
docker info >/dev/null 2>"$WORK/info.err" \
    || fail "no Docker engine answers ($(tail -n 1 "$WORK/info.err")); start dockerd first (docs/deployment.md)"

# -- the base image ---------------------------------------------------------------------------
base_make() {
    command -v debootstrap >/dev/null || fail "cannot pull $BASE and debootstrap is not installed"
    [ "$(id -u)" = 0 ] || fail "cannot pull $BASE, and making it with debootstrap needs root"
    ROOTFS=$(mktemp -d /var/tmp/hardtests-rootfs.XXXXXX)
    chmod 755 "$ROOTFS"  # it becomes the image's /: mktemp's 700 would shut every other user out
    say "making $BASE with debootstrap --variant=minbase $SUITE from $MIRROR"
    local started; started=$(now)
    debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
        || fail "debootstrap failed: $(tail -n 3 "$WORK/debootstrap.log" | tr '\n' ' ')"
    # The official image's sources (updates and security too) and no package caches.
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s-security %s-security main\n' \
        "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" >"$ROOTFS/etc/apt/sources.list"
    rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb
    if [ -n "$CA_BUNDLE" ] && [ -f "$CA_BUNDLE" ]; then
        install -m 644 "$CA_BUNDLE" "$ROOTFS/usr/local/share/build-ca-bundle.crt"
        printf '[global]\ncert = /usr/local/share/build-ca-bundle.crt\n' >"$ROOTFS/etc/pip.conf"
        say "pip in the local base trusts $CA_BUNDLE"
    fi
    # The official image's PATH and command: without PATH in the image, the Dockerfile's
    # `ENV PATH=/opt/venv/bin:$PATH` would drop /usr/bin.
    tar --numeric-owner -C "$ROOTFS" -c . | docker import \
        -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        -c 'CMD ["bash"]' - "$BASE" >/dev/null || fail "docker import of the root filesystem failed"
    rm -rf "$ROOTFS"
    ROOTFS=""
    say "base image $BASE made in $(( $(now) - started )) s"
}

if [ "$BUILD" = 1 ]; then
    if docker image inspect "$BASE" >/dev/null 2>&1; then
        say "base image $BASE is present"
    elif timeout 120 docker pull "$BASE" >"$WORK/pull.log" 2>&1; then
        say "base image $BASE pulled"
    else
        say "cannot pull $BASE: $(tail -n 1 "$WORK/pull.log")"
        base_make
    fi

    # -- the build ----------------------------------------------------------------------------
    say "building $IMAGE (log: steps below; the full output is shown on failure)"
    started=$(now)
    if ! DOCKER_BUILDKIT=0 docker build --network host -t "$IMAGE" "$REPO" 2>&1 \
            | tee "$WORK/build.log" | grep --line-buffered '^Step '; then
        :
    fi
    if [ "${PIPESTATUS[0]}" != 0 ] || ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
        tail -n 40 "$WORK/build.log" >&2
        fail "docker build failed"
    fi
    BUILD_S=$(( $(now) - started ))
    SIZE=$(docker image inspect -f '{{.Size}}' "$IMAGE")
    say "built $IMAGE in $BUILD_S s; image size $(( SIZE / 1000000 )) MB"
else
    docker image inspect "$IMAGE" >/dev/null 2>&1 || fail "--no-build, and there is no image $IMAGE"
fi

if [ "$PRUNE" = 1 ]; then
    say "removing dangling images (the build stage's layers): $(docker image prune -f | tail -n 1)"
fi
[ "$SMOKE" = 1 ] || exit 0

# -- the smoke test -----------------------------------------------------------------------------
command -v curl >/dev/null || fail "the smoke test needs curl on this host"
command -v python3 >/dev/null || fail "the smoke test needs python3 on this host (free ports, secrets)"
REDIS_SERVER=$(command -v redis-server) || fail "the smoke test needs redis-server on this host (scripts/bootstrap.sh installs it)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
secret() { python3 -c 'import secrets; print(secrets.token_urlsafe(50))'; }
PORT=${PORT:-$(free_port)}
REDIS_PORT=$(free_port)
REDIS_PASSWORD=$(secret)
HEALTH_TOKEN=$(secret)
BASE_URL=http://127.0.0.1:$PORT
smoke_started=$(now)

# A Redis of its own (compose.yaml's is an image this machine may not have): loopback, password,
# no persistence; the containers share the host's network.
umask 077
printf 'port %s\nbind 127.0.0.1\nrequirepass %s\nsave ""\nappendonly no\ndir %s\n' \
    "$REDIS_PORT" "$REDIS_PASSWORD" "$WORK" >"$WORK/redis.conf"
"$REDIS_SERVER" "$WORK/redis.conf" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
# Secrets go to the containers through an env file, never a command line.
cat >"$WORK/env" <<EOF
SECRET_KEY=$(secret)
ALLOWED_HOSTS=127.0.0.1,localhost
REDIS_URL=redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT/0
PORT=$PORT
HARDTESTS_WEB_WORKERS=2
HARDTESTS_HEALTH_TOKEN=$HEALTH_TOKEN
HARDTESTS_WORKER_CHECK_S=5
DJANGO_SUPERUSER_PASSWORD=$(secret)
EOF
umask 022

VOLUME=$TAG-var
docker volume create "$VOLUME" >/dev/null
step() {  # step "what" command...: the output on failure
    local what=$1; shift
    if ! "$@" >"$WORK/step.log" 2>&1; then
        tail -n 25 "$WORK/step.log" >&2
        fail "$what"
    fi
}

# The web: the image's own command and user. The one-off commands below run in it with
# `docker exec` (as its user, with its environment): with a copying storage driver every new
# container costs a copy of the image, about 30-60 s here.
WEB=$TAG-web
CONTAINERS+=("$WEB")
docker run -d --name "$WEB" --network host --env-file "$WORK/env" -v "$VOLUME:/var/lib/hardtests" "$IMAGE" >/dev/null
run() { docker exec "$WEB" "$@"; }
deadline=$(( $(now) + 300 ))
until curl -fsS -o "$WORK/healthz" "$BASE_URL/healthz" 2>/dev/null; do
    [ "$(docker inspect -f '{{.State.Running}}' "$WEB")" = true ] \
        || fail "the web container exited: $(docker logs --tail 15 "$WEB" 2>&1 | tr '\n' ' ')"
    [ "$(now)" -lt "$deadline" ] || fail "no answer on $BASE_URL/healthz after 300 s"
    sleep 1
done

step "manage.py migrate failed" run python manage.py migrate --noinput
say "migrate: $(grep -c '  Applying ' "$WORK/step.log") migrations applied to a fresh SQLite database in the volume"
# HSTS and the HTTPS redirect are the TLS proxy's (docs/deployment.md): those two warnings are
# expected; any other issue fails.
run python manage.py check --deploy >"$WORK/check.log" 2>&1 || true
issues=$(grep -o '(security\.[A-Z][0-9]*)\|([a-z_.]*\.[EWC][0-9]*)' "$WORK/check.log" | sort -u | tr '\n' ' ' || true)
unexpected=$(printf '%s\n' $issues | grep -v -x '(security.W004)\|(security.W008)' || true)
if [ -n "$unexpected" ] || ! grep -q 'System check identified' "$WORK/check.log"; then
    tail -n 25 "$WORK/check.log" >&2
    fail "manage.py check --deploy: $(echo $unexpected)"
fi
say "check --deploy: only ${issues:-no issues} (HSTS, HTTPS redirect: the proxy's)"
step "load_demo failed" run python manage.py load_demo --no-users
say "load_demo: $(tail -n 1 "$WORK/step.log" | cut -c1-150)"
step "createsuperuser failed" run python manage.py createsuperuser --noinput --username smoke --email smoke@example.invalid
step "create_api_token failed" run python manage.py create_api_token smoke --name docker-smoke
API_TOKEN=$(tail -n 1 "$WORK/step.log")

WEB_USER=$(docker exec "$WEB" id -un)
[ "$WEB_USER" = hardtests ] || fail "the web runs as $WEB_USER, not hardtests"
say "web: $BASE_URL/healthz answered $(head -c 80 "$WORK/healthz") ($(( $(now) - smoke_started )) s into the smoke test), as user $WEB_USER"

curl -fsS -o "$WORK/login.html" "$BASE_URL/accounts/login/" || fail "the login page did not answer 200"
STATIC=$(grep -o '/static/[^"]*\.css' "$WORK/login.html" | head -n 1)
[ -n "$STATIC" ] || fail "the login page links no stylesheet under /static/"
curl -fsS -o "$WORK/static" -D "$WORK/static.headers" "$BASE_URL$STATIC" || fail "$STATIC is not served"
[ -s "$WORK/static" ] || fail "$STATIC is empty"
say "static: $STATIC served by whitenoise ($(wc -c <"$WORK/static") bytes)"

# A verify worker: compose.yaml's settings (root, CAP_SYS_ADMIN, seccomp and AppArmor unconfined)
# and three more that the sandbox needs inside a container, found by running it here:
#  - systempaths=unconfined: Docker mounts /proc/sys read-only, and bubblewrap's
#    --disable-userns writes /proc/sys/user/max_user_namespaces in its new namespace;
#  - /sys/fs/cgroup writable: Docker mounts it read-only, and without a cgroup of its own per
#    batch the sandbox has no CPU time of every process, so it refuses to judge (SE);
#  - /dev/shm with exec: Docker's is noexec, and a batch's copy of a compiled program lives there.
# (--privileged would give the first two, and cannot start where the engine lacks a capability.)
WORKER=$TAG-verify-worker
CONTAINERS+=("$WORKER")
docker run -d --name "$WORKER" --network host --env-file "$WORK/env" -v "$VOLUME:/var/lib/hardtests" \
    --user 0:0 --cap-add SYS_ADMIN --cap-add SYS_NICE \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --security-opt systempaths=unconfined -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
    --tmpfs /dev/shm:rw,nosuid,nodev,exec,size=512m \
    "$IMAGE" python manage.py rqworker --worker-class hardtests_web.ops.worker.CheckedWorker api >/dev/null
deadline=$(( $(now) + 180 ))
until docker exec "$WORKER" python -m hardtests_web.ops.healthcheck >/dev/null 2>"$WORK/worker-health"; do
    [ "$(docker inspect -f '{{.State.Running}}' "$WORKER")" = true ] \
        || fail "the worker exited: $(docker logs --tail 15 "$WORKER" 2>&1 | tr '\n' ' ')"
    [ "$(now)" -lt "$deadline" ] || fail "the worker is not healthy after 180 s: $(cat "$WORK/worker-health") $(docker logs --tail 10 "$WORKER" 2>&1 | tr '\n' ' ')"
    sleep 2
done
say "verify worker: its healthcheck passes (it beats and can judge)"
# /healthz/deep answers 503 here, rightly: no janitor and no worker on the other queues run in
# this smoke test. Every check it makes must pass, and it must see the verify worker able to judge.
deep=$(curl -sS -o "$WORK/deep.json" -w '%{http_code}' -H "Authorization: Bearer $HEALTH_TOKEN" "$BASE_URL/healthz/deep")
python3 - "$WORK/deep.json" "$deep" <<'PY' || fail "/healthz/deep answered $deep: $(head -c 800 "$WORK/deep.json")"
import json, sys
deep = json.load(open(sys.argv[1]))
failed = [name for name, check in deep["checks"].items() if not check["ok"]]
judges = [w for w in deep["workers"]["api"] if w["alive"] and w["can_judge"]]
# what this smoke test does not start: the janitor, workers on the other queues
not_started = {"janitor: no pass recorded (is `manage.py janitor` running?)"} | {
    f"workers: none alive listens on the {queue} queue" for queue in ("generation", "sandbox", "default")}
other = [p for p in deep["problems"] if p not in not_started]
if other:
    print(f"docker_smoke: /healthz/deep also reports: {other}", file=sys.stderr)
print(f"docker_smoke: /healthz/deep: {sys.argv[2]}; checks {', '.join(deep['checks'])} ok; "
      f"{len(judges)} verify worker able to judge; {len(deep['problems'])} problem(s) reported, all about "
      "what this smoke test does not start (janitor, other queues)")
sys.exit(1 if failed or not judges or other else 0)
PY

# Programs with known verdicts through the API, with the client inside the web container. The
# demo problem's own solutions: oracles (reward 1) and wrong programs (reward 0) in three languages.
cat >"$WORK/verify.py" <<'EOF'
import json
import sys
import time
from pathlib import Path

from hardtests_client import HardTestsClient, VerifyRequest

SOLUTIONS = Path("/app/problems/demo_data/isqrt/solutions")
# The fresh demo's active suite is its sample test (no kit is materialised here): the wrong
# programs fail that sample.
OFF_BY_ONE = "import sys\nfor n in sys.stdin.read().split()[1:]:\n    print(int(int(n) ** 0.5) + 1)\n"
CASES = [("oracle.py", "python3", 1), ("off_by_one.py", "python3", 0), ("oracle.cpp", "cpp", 1),
         ("wrong_overflow_search.cpp", "cpp", 0), ("oracle.java", "java", 1)]
failures = []
with HardTestsClient(timeout_s=300) as client:
    for name, language, expected in CASES:
        started = time.monotonic()
        code = OFF_BY_ONE if name == "off_by_one.py" else (SOLUTIONS / name).read_text()
        result = client.verify("demo:demo/isqrt", code, language, mode="all")
        line = {"program": name, "verdict": result.verdict, "reward": result.reward, "expected": expected,
                "passed": result.passed,
                "total": result.total, "seconds": round(time.monotonic() - started, 1)}
        print(json.dumps(line), flush=True)
        if result.reward != expected or result.total < 1:
            failures.append(name)
sys.exit(f"wrong reward for {failures}" if failures else 0)
EOF
docker cp "$WORK/verify.py" "$WEB:/tmp/verify.py" >/dev/null
if ! HARDTESTS_URL=$BASE_URL HARDTESTS_TOKEN=$API_TOKEN \
        docker exec -e HARDTESTS_URL -e HARDTESTS_TOKEN -e PYTHONPATH=/app "$WEB" python /tmp/verify.py >"$WORK/verify.out" 2>&1; then
    cat "$WORK/verify.out" >&2
    docker logs --tail 30 "$WORKER" >&2 2>&1 || true
    fail "a verification through the API did not give the expected reward"
fi
sed 's/^/docker_smoke: verify: /' "$WORK/verify.out"

# Docker's own view of the web (the image's HEALTHCHECK; its first probe is 30 s after start).
deadline=$(( $(now) + 120 ))
until [ "$(docker inspect -f '{{.State.Health.Status}}' "$WEB")" = healthy ]; do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$WEB")" != unhealthy ] \
        || fail "Docker reports the web unhealthy: $(docker inspect -f '{{json .State.Health.Log}}' "$WEB" | head -c 400)"
    [ "$(now)" -lt "$deadline" ] || fail "the web's HEALTHCHECK is not healthy after 120 s"
    sleep 3
done
say "web HEALTHCHECK: healthy"

started=$(now)
docker stop -t 90 "$WEB" >/dev/null
code=$(docker inspect -f '{{.State.ExitCode}}' "$WEB")
[ "$code" = 0 ] || fail "the web exited with $code on SIGTERM: $(docker logs --tail 10 "$WEB" 2>&1 | tr '\n' ' ')"
say "web: SIGTERM stopped it in $(( $(now) - started )) s with exit code 0"
say "passed: smoke test of $IMAGE in $(( $(now) - smoke_started )) s"
