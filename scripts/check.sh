#!/usr/bin/env bash
# What CI runs before the suite, each step timed: lint, types, the architecture contracts, the
# docs build, and `make run` as a newcomer runs it (scripts/smoke_run.py). Stops at the first
# failing step (the type check runs beside the rest). `scripts/check.sh STEP ...` runs only
# those steps, one after another.
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1

lint()      { .venv/bin/ruff check .; }
types()     { .venv/bin/mypy; }
contracts() { .venv/bin/lint-imports --no-logo; }
docs()      { .venv/bin/mkdocs build --strict --quiet --site-dir "${TMPDIR:-/tmp}/hardtests-site"; }
smoke()     { .venv/bin/python scripts/smoke_run.py; }

run_steps() {
  local step started
  for step in "$@"; do
    started=$SECONDS
    echo "== $step"
    "$step" || return $?
    echo "== $step: $((SECONDS - started)) s"
  done
}

if (($#)); then
  run_steps "$@"
  exit 0
fi
# All of them: the type check (one CPU for about 20 s) runs beside the others (a fresh clone's
# checks: 36 s, against 41 s one after another); its output follows theirs.
log=$(mktemp)
run_steps types >"$log" 2>&1 &
beside=$!
rc=0; run_steps lint contracts docs smoke || rc=$?
trc=0; wait "$beside" || trc=$?
echo "== the types step, run beside the others:"
cat "$log"; rm -f "$log"
((rc == 0)) || exit $rc
exit $trc
