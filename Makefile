# The HIL workspace's commands. A new user needs two: `make sim` and `make test`.
# Every target bootstraps first (a no-op taking about a second once done), then runs
# inside the environment of setup.bash.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
ARGS ?=
PYTEST_ARGS ?=
IN_ENV := source $(CURDIR)/setup.bash &&

.PHONY: help bootstrap test lint typecheck pytest sim bench clean

help:
	@echo "make sim        run the simulation (options: make sim ARGS=\"--headless --duration 120\")"
	@echo "make test       bootstrap if needed, then ruff, mypy and every test"
	@echo "make bench      run bench/*.py, write bench/results/latest.{json,md}"
	@echo "make bootstrap  only set up .venv, ROS 2 and ws/install"
	@echo "make clean      remove build outputs (keeps .venv)"

bootstrap:
	@$(PYTHON) tools/bootstrap.py

test: bootstrap
	@$(MAKE) --no-print-directory lint typecheck pytest

lint:
	@echo "== ruff (lint + format check)"
	@$(IN_ENV) ruff check . && ruff format --check .

typecheck:
	@echo "== mypy (pure cores)"
	@$(IN_ENV) mypy

pytest:
	@echo "== pytest (ws/src/*/test and test/)"
	@$(IN_ENV) { pytest $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc; }

sim: bootstrap
	@$(IN_ENV) python -m hil_bringup.hil_sim_runner $(ARGS)

bench: bootstrap
	@$(IN_ENV) python tools/run_bench.py $(ARGS)

clean:
	rm -rf ws/build ws/install ws/log .overlay
