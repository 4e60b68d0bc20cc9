#!/usr/bin/env bash
# The whole suite, in four steps (docs/testing.md):
#   parallel  every test but the sandbox's own, on SQLite, in several processes
#   serial    the sandbox's own tests (marker `serial`), one process, nothing beside it
#   alone     the tests marked `alone`, each in a fresh process
#   postgres  the database tests (marker `postgres`) again on a throwaway PostgreSQL server
# `scripts/test.sh [PYTEST ARGS]` runs the four in that order; `scripts/test.sh --step NAME
# [PYTEST ARGS]` runs one (.ci/run starts them itself). The fast tier is scripts/test-fast.
# (Lint is `make lint`, kept apart so a style nit never hides test results.)
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode is cached (__pycache__, ignored by git): the suite starts hundreds of Python
# processes (workers, servers, commands), and without the cache each compiled every module
# of the project it imported again (PYTHONDONTWRITEBYTECODE may come set from outside).
unset PYTHONDONTWRITEBYTECODE

steps=(parallel serial alone postgres)
if [[ "${1:-}" == "--step" ]]; then
  [[ -n "${2:-}" ]] || { echo "usage: scripts/test.sh [--step parallel|serial|alone|postgres] [PYTEST ARGS]" >&2; exit 2; }
  steps=("$2")
  shift 2
fi

# Two processes (pytest-xdist) a core and one more, each with its own database, Redis and
# workers: much of a test's time is waiting (servers starting, faults healing, browsers), and
# with fewer the last long files ran alone on an idle machine (first pass on 2 cores, the same
# tree: 13 min 47 s with 3 processes, 11 min 43 s with 5). A test file stays in one process so
# its module fixtures are built once. HARDTESTS_TEST_PROCS=1 runs everything in one process.
procs=${HARDTESTS_TEST_PROCS:-$(( 2 * $(nproc) + 1 ))}
# The longest files go first (tests/conftest.py orders them; xdist's own reordering is off).
xdist=(-n "$procs" --dist loadfile --no-loadscope-reorder)
[[ "$procs" == 1 ]] && xdist=()
pytest=(.venv/bin/pytest -q -p no:cacheprovider)
# Exit 5 (no tests collected) is not a failure here: arguments may select nothing in a pass.
run() { "$@" || { rc=$?; [[ $rc -eq 5 ]] || exit $rc; }; }

parallel() { run "${pytest[@]}" "${xdist[@]}" --durations=15 -m "not serial and not alone" "$@"; }
# The sandbox's own tests measure CPU time, run delay and memory: nothing but themselves on a
# CPU. They run in one process a CPU, each process and every sandbox it starts kept to its own
# CPU (HARDTESTS_TEST_PIN, tests/conftest.py; a container too: sandbox/docker_backend.py). Tests,
# not files, are shared out: one file (test_starvation.py) is half the pass, and by file one
# process finished 33 s before the other (170 s against 144 s by test).
serial() {
  local cpus
  cpus=$(nproc)
  if [[ "$procs" == 1 || $cpus -lt 2 ]]; then
    run "${pytest[@]}" --durations=5 -m serial "$@"
    return
  fi
  HARDTESTS_TEST_PIN=1 run "${pytest[@]}" -n "$cpus" --dist load --durations=5 \
    -m serial "$@"
}
# Tests that measure their own process (peak memory, a program's CPU) each get a fresh one. What
# they measure does not move with load, so those processes run at once. Only the files that mark
# a test `alone` are collected (a whole collection is 7 s of CPU), unless arguments say where.
alone() {
  local test where=("$@") logs pids=() rc=0 i=0 code
  [[ $# -gt 0 ]] || mapfile -t where < <(grep -rl --include='test_*.py' 'pytest.mark.alone' tests)
  [[ ${#where[@]} -gt 0 ]] || return 0
  logs=$(mktemp -d)
  for test in $("${pytest[@]}" --collect-only -m alone "${where[@]}" | grep '::'); do
    "${pytest[@]}" "$test" >"$logs/$i" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { code=$?; [[ $code -eq 5 ]] || rc=$code; }
    cat "$logs/$i"
  done
  rm -rf "$logs"
  return $rc
}
# One process a core: each copies the template database and starts its own Redis
# and workers, a large share of so short a pass whose tests wait little (on 2 cores, the same
# tree: 24 s with 2 processes, 27 s with 3, 36 s with 5).
postgres() {
  local pg=(-n "${HARDTESTS_TEST_PROCS:-$(nproc)}" --dist loadfile --no-loadscope-reorder)
  [[ "${HARDTESTS_TEST_PROCS:-}" == 1 ]] && pg=()
  run .venv/bin/python scripts/with_postgres.py -- "${pytest[@]}" "${pg[@]}" -m postgres "$@"
}

for step in "${steps[@]}"; do
  case "$step" in
    parallel|serial|alone|postgres) ;;
    *) echo "scripts/test.sh: no step $step (parallel, serial, alone, postgres)" >&2; exit 2 ;;
  esac
  started=$SECONDS
  "$step" "$@"
  echo "== test $step: $((SECONDS - started)) s"
done
