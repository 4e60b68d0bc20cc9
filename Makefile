# The two commands: `make run` and `make test`. Everything they need is installed by
# scripts/bootstrap.sh (system packages when root, the virtualenv, Python packages).
PY := .venv/bin/python
PORT ?= 8000

.PHONY: run test bootstrap lint bench stop clean-var

run: bootstrap
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py serve --port $(PORT)

test: bootstrap
	scripts/test.sh

bootstrap:
	@scripts/bootstrap.sh

lint: bootstrap
	.venv/bin/ruff check .

bench: bootstrap
	$(PY) bench/sandbox.py
	$(PY) bench/pipeline.py

stop:
	-$(PY) manage.py redis_stop
