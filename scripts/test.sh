#!/usr/bin/env bash
# The whole suite: every test on SQLite, then the database tests (marker `postgres`) again
# on a real PostgreSQL server that scripts/with_postgres.py starts and stops.
# (Lint is `make lint`, kept apart so a style nit never hides test results.)
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode is cached (__pycache__, ignored by git): the suite starts hundreds of Python
# processes (workers, servers, commands), and without the cache each compiled every module
# of the project it imported again (PYTHONDONTWRITEBYTECODE may come set from outside).
unset PYTHONDONTWRITEBYTECODE

# Two processes (pytest-xdist) a core and one more, each with its own database, Redis and
# workers: much of a test's time is waiting (servers starting, faults healing, browsers), and
# with fewer the last long files ran alone on an idle machine (first pass on 2 cores, the same
# tree: 13 min 47 s with 3 processes, 11 min 43 s with 5). A test file stays in one process so
# its module fixtures are built once. HARDTESTS_TEST_PROCS=1 runs everything in one process.
procs=${HARDTESTS_TEST_PROCS:-$(( 2 * $(nproc) + 1 ))}
# The longest files go first (tests/conftest.py orders them; xdist's own reordering is off).
parallel=(-n "$procs" --dist loadfile --no-loadscope-reorder)
[[ "$procs" == 1 ]] && parallel=()
# Exit 5 (no tests collected) is not a failure here: arguments may select nothing in a pass.
run() { "$@" || { rc=$?; [[ $rc -eq 5 ]] || exit $rc; }; }
run .venv/bin/pytest -q -p no:cacheprovider "${parallel[@]}" --durations=15 -m "not serial and not alone" "$@"
# The sandbox's own tests measure CPU time and memory: one process, nothing beside them.
run .venv/bin/pytest -q -p no:cacheprovider --durations=5 -m serial "$@"
# Tests that measure their own process (peak memory, a program's CPU) each get a fresh one.
for test in $(.venv/bin/pytest -q -p no:cacheprovider --collect-only -m alone "$@" | grep '::'); do
  run .venv/bin/pytest -q -p no:cacheprovider "$test"
done
run .venv/bin/python scripts/with_postgres.py -- .venv/bin/pytest -q -p no:cacheprovider "${parallel[@]}" -m postgres "$@"
