#!/usr/bin/env bash
# The whole suite: every test on SQLite, then the database tests (marker `postgres`) again
# on a real PostgreSQL server that scripts/with_postgres.py starts and stops.
# (Lint is `make lint`, kept apart so a style nit never hides test results.)
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1

.venv/bin/pytest -q -p no:cacheprovider "$@"
# Exit 5 (no tests collected) is not a failure here: the marker may select nothing.
set +e
.venv/bin/python scripts/with_postgres.py -- .venv/bin/pytest -q -p no:cacheprovider -m postgres "$@"
rc=$?
set -e
if [[ $rc -ne 0 && $rc -ne 5 ]]; then exit $rc; fi
