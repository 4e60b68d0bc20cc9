#!/usr/bin/env bash
# Installs what is missing: system packages (when root), the virtualenv and the Python
# packages. Cheap when everything is already there, so every make target can call it.
set -euo pipefail
cd "$(dirname "$0")/.."

# command-or-file -> Debian package
declare -A NEED=(
  [bwrap]=bubblewrap
  # the sandbox runner builds its seccomp filter with libseccomp (header at build time)
  [/usr/include/seccomp.h]=libseccomp-dev
  [redis-server]=redis-server
  [g++]=g++
  [javac]=openjdk-17-jdk-headless
  [/usr/bin/python3]=python3
  [chromium]=chromium
  [chromedriver]=chromium-driver
  [docker-compose]=docker-compose
)
missing=()
for cmd in "${!NEED[@]}"; do
  if [[ "$cmd" == /* ]]; then [[ -e "$cmd" ]] || missing+=("${NEED[$cmd]}")
  else command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEED[$cmd]}"); fi
done
# PostgreSQL: `make test` runs the database tests a second time on a real server, and fails
# (never skips) without one. Debian keeps the server binaries off PATH.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  missing+=(postgresql)
fi
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "bootstrap: missing system packages: ${missing[*]}" >&2
    echo "bootstrap: install them as root (apt-get install ${missing[*]}) and run again" >&2
    exit 1
  fi
fi

PYTHON=${PYTHON:-}
if [[ -z "$PYTHON" ]]; then
  for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(not ((3,11) <= sys.version_info[:2] < (3,14)))'; then
      PYTHON=$candidate; break
    fi
  done
fi
[[ -n "$PYTHON" ]] || { echo "bootstrap: Python 3.11 not found (CI runs 3.11; a 3.12 or 3.13 would be used, untested)" >&2; exit 1; }

if [[ ! -x .venv/bin/python ]]; then
  echo "bootstrap: creating .venv with $PYTHON"
  "$PYTHON" -m venv .venv
fi
# Installs are reproducible: requirements-dev.lock pins every package (made by `make lock` with
# uv from pyproject.toml: the runtime lock requirements.lock plus the tests, linters and docs);
# the project itself is then installed without resolving anything.
stamp=.venv/.installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp || requirements-dev.lock -nt $stamp ]]; then
  echo "bootstrap: installing Python packages (requirements-dev.lock)"
  # uv (pinned in the lock) installs the lock in ~30 s where pip takes ~2 min; pip is the
  # fallback when uv cannot be fetched or fails. uv reads no pip.conf: the wheel directory
  # and the CA bundle pip is configured with are passed on; --compile-bytecode writes the .pyc
  # files pip writes (without them, and with PYTHONDONTWRITEBYTECODE set, every process
  # compiles every module it imports: 9 s for `manage.py check`).
  uv_args=(--python .venv/bin/python -q --compile-bytecode)
  for links in ${PIP_FIND_LINKS:-} $(.venv/bin/python -m pip config get global.find-links 2>/dev/null || true); do
    [[ -d "$links" ]] && uv_args+=(--find-links "$links")
  done
  [[ -z "${SSL_CERT_FILE:-}" && -f /etc/ssl/certs/ca-certificates.crt ]] && export SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
  uv_version=$(sed -n 's/^uv==\([^ ]*\).*/\1/p' requirements-dev.lock)
  # verl for tests/ecosystem: only its sandbox_fusion reward module is used, which needs
  # requests alone; its own dependencies (torch, ray, vllm...) are gigabytes.
  if .venv/bin/python -m pip install -q "uv==$uv_version" 2>/dev/null \
     && .venv/bin/uv pip install "${uv_args[@]}" -r requirements-dev.lock \
     && .venv/bin/uv pip install "${uv_args[@]}" --no-deps -e . 'verl==0.9.1'; then
    :
  else
    echo "bootstrap: uv failed; installing with pip"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -r requirements-dev.lock
    .venv/bin/python -m pip install -q --no-deps -e .
    .venv/bin/python -m pip install -q --no-deps 'verl==0.9.1'
  fi
  touch $stamp
fi
mkdir -p var
