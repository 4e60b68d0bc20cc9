# The two commands: `make run` and `make test`. Everything they need is installed by
# scripts/bootstrap.sh (system packages when root, the virtualenv, Python packages).
# `make test-fast` is the fast tier: the unit tests needing no Redis, sandbox, server or browser.
PY := .venv/bin/python
PORT ?= 8000

.PHONY: run test test-fast check docs bootstrap lint lock bench stop clean-var

run: bootstrap
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py serve --port $(PORT)

test: bootstrap
	scripts/test.sh

test-fast: bootstrap
	scripts/test-fast

bootstrap:
	@scripts/bootstrap.sh

# Re-pin every package after editing pyproject.toml. Two locks: requirements.lock is what the
# app needs to run (the Docker image installs it alone); requirements-dev.lock adds the tests,
# the linters, the docs and the `hf` extra, pinned to the same versions as the runtime lock
# (bootstrap installs it for development and CI).
UV_COMPILE := .venv/bin/uv pip compile pyproject.toml --universal --python-version 3.11 \
	  --quiet --no-header --annotation-style line
lock: bootstrap
	$(UV_COMPILE) -o requirements.lock
	$(UV_COMPILE) --extra dev --extra hf --constraint requirements.lock -o requirements-dev.lock

lint: bootstrap
	scripts/check.sh lint

# What CI runs before the suite: ruff, mypy, the import contracts, the docs, the `make run` smoke test.
check: bootstrap
	scripts/check.sh

docs: bootstrap
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

bench: bootstrap
	$(PY) bench/sandbox.py
	$(PY) bench/pipeline.py

stop:
	-$(PY) manage.py redis_stop
