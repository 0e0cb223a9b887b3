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

# ruff first (a second); then mypy beside the parallel pytest pass; then the serial pass
# (the tests marked serial, which cannot share the machine) alone. Fails if any fails.
test: bootstrap
	@$(MAKE) --no-print-directory lint
	@$(IN_ENV) { echo "== mypy (pure cores), beside the parallel pytest pass"; \
	  log=$$(mktemp); mypy > $$log 2>&1 & typecheck=$$!; \
	  $(PYTEST_PARALLEL); parallel=$$?; \
	  wait $$typecheck; mypy_rc=$$?; echo "== mypy"; cat $$log; rm -f $$log; \
	  $(PYTEST_SERIAL); serial=$$?; \
	  $(VERDICT); }

lint:
	@echo "== ruff (lint + format check)"
	@$(IN_ENV) ruff check . && ruff format --check .

typecheck:
	@echo "== mypy (pure cores)"
	@$(IN_ENV) mypy

pytest:
	@$(IN_ENV) { $(PYTEST_PARALLEL); parallel=$$?; $(PYTEST_SERIAL); serial=$$?; mypy_rc=0; $(VERDICT); }

# Workers of the parallel pass: one more than the cores this make may use, as a sixth of
# a run's time is tests that wait (processes starting, runs at real time) and an extra
# worker fills it (2 cores: 279 s against 315 s with one per core); PYTEST_WORKERS=2 overrides.
PYTEST_WORKERS ?= $(shell python3 -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
PYTEST_PARALLEL = echo "== pytest, parallel ($(PYTEST_WORKERS) workers): ws/src/*/test, test/, firmware/test"; \
	pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=10 $(PYTEST_ARGS)
PYTEST_SERIAL = echo "== pytest, serial: the tests marked serial, alone"; pytest --only-serial $(PYTEST_ARGS)
# Either pass may collect nothing (exit 5: PYTEST_ARGS chose none of its tests), not both.
VERDICT = if [ $$parallel -eq 5 ] && [ $$serial -eq 5 ]; then \
	  echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	for rc in $$mypy_rc $$parallel $$serial; do \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 5 ]; then exit $$rc; fi; done

sim: bootstrap
	@$(IN_ENV) python -m hil_bringup.hil_sim_runner $(ARGS)

bench: bootstrap
	@$(IN_ENV) python tools/run_bench.py $(ARGS)

clean:
	rm -rf ws/build ws/install ws/log .overlay .cache
