#!/usr/bin/env bash
# What CI runs before the suite, each step timed: lint, types, the architecture contracts, the
# docs build, and `make run` as a newcomer runs it (scripts/smoke_run.py). Stops at the first
# failing step. `scripts/check.sh STEP ...` runs only those steps.
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1

lint()      { .venv/bin/ruff check .; }
types()     { .venv/bin/mypy; }
contracts() { .venv/bin/lint-imports --no-logo; }
docs()      { .venv/bin/mkdocs build --strict --quiet --site-dir "${TMPDIR:-/tmp}/hardtests-site"; }
smoke()     { .venv/bin/python scripts/smoke_run.py; }

steps=("$@")
((${#steps[@]})) || steps=(lint types contracts docs smoke)
for step in "${steps[@]}"; do
  started=$SECONDS
  echo "== $step"
  "$step"
  echo "== $step: $((SECONDS - started)) s"
done
