# The two commands: `make run` and `make test`. Everything they need is installed by
# scripts/bootstrap.sh (system packages when root, the virtualenv, Python packages).
PY := .venv/bin/python
PORT ?= 8000

.PHONY: run test bootstrap lint lock bench stop clean-var

run: bootstrap
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py serve --port $(PORT)

test: bootstrap
	scripts/test.sh

bootstrap:
	@scripts/bootstrap.sh

# Re-pin every package after editing pyproject.toml (bootstrap installs from the lock).
lock: bootstrap
	.venv/bin/uv pip compile pyproject.toml --extra dev --extra hf --universal --python-version 3.11 \
	  --quiet --no-header --annotation-style line -o requirements.lock

lint: bootstrap
	.venv/bin/ruff check .

bench: bootstrap
	$(PY) bench/sandbox.py
	$(PY) bench/pipeline.py

stop:
	-$(PY) manage.py redis_stop
