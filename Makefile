# agent-host. On a fresh machine (Python 3.11+):
#   make demo   install agent-host (the runtime alone), build the example agent and run it against the bundled MCP server
#   make test   set everything up, lint, type-check and run every test, with coverage
#   make test-fast   the unit tests alone (under a minute)
#   make docs   serve the documentation site on http://127.0.0.1:8000 (mkdocs.yml; `make lint` builds it strictly)
# Guest builds and compiled components are cached in ~/.cache/agent-host (or $AGENT_HOST_CACHE).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME := $(VENV)/.runtime
PIP := $(BIN)/python -m pip install --disable-pip-version-check --progress-bar on
PYTHON_CHECK := $(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "agent-host needs Python 3.11 or newer: run make PYTHON=python3.11")'

.PHONY: setup guests demo test test-fast lint docs bench clean

# What development needs: the package with its dev and Ray extras, and the dev runner built ahead
# (the first `agent-host dev` of a guest then starts at once).
setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON_CHECK)
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[dev,ray]'
	$(BIN)/agent-host dev --prepare
	touch $(RUNTIME) $@

# What the demo needs: the package alone (its runtime dependencies).
$(RUNTIME): pyproject.toml
	@$(PYTHON_CHECK)
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e .
	touch $@

guests: setup
	$(BIN)/agent-host build guests/demo
	$(BIN)/agent-host build tests/guests/probe
	$(BIN)/agent-host build tests/guests/blunders

demo: $(RUNTIME)
	$(BIN)/agent-host run guests/demo
	@echo
	@echo 'next: . $(VENV)/bin/activate, then write an agent and run it on every save:'
	@echo '  agent-host new scout && agent-host dev guests/scout'
	@echo 'README.md, "Quick start", goes on from there; make setup installs the development tools.'

# deptry ([tool.deptry] in pyproject.toml): every package imported is declared; the package alone against
# its dependencies and extras, then the whole repository (the tests' dev tools excepted).
lint: setup
	$(BIN)/ruff check host tests guests docs/hooks
	$(BIN)/ruff format --check host tests guests docs/hooks
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/deptry host --per-rule-ignores DEP002=componentize-py
	$(BIN)/deptry .
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# The documentation site, rebuilt on every save (the reference pages are generated from the code).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

# Test files run in parallel (a file on one worker: its module-scoped servers stay whole); most of
# a test's time is spent waiting on guests, servers and clients, so more workers than cores. Python
# children are forked from a server that has imported the SDK (tests/support/forkserver.py). The Ray
# tests run after, alone: beside the others (measured) they took five times as long and flaked.
TEST_WORKERS ?= 4

# Coverage (pyproject [tool.coverage]: every Python child process too) of both runs, combined into
# .coverage; the total is printed once at the end, and `make test` fails under its `fail_under`.
COVERAGE := --cov --cov-report= --cov-fail-under=0

test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m 'not ray' --durations=20 $(COVERAGE)
	$(BIN)/python -m pytest -m ray $(COVERAGE) --cov-append
	@printf 'coverage of agent_host, lines, every process (per file: $(BIN)/coverage report): '
	@$(BIN)/coverage report --format=total

# The unit tests alone, no coverage: under a minute.
test-fast: setup
	$(BIN)/python -m pytest tests/unit -n $(TEST_WORKERS) -m 'not component and not npm and not ray'

BENCH := $(VENV)/.bench

# The benchmarks' own references (pydantic-monty, the `bench` extra), beside what development needs.
$(BENCH): $(STAMP)
	$(PIP) -e '.[dev,ray,bench]'
	touch $@

bench: $(BENCH)
	$(BIN)/python -m tests.bench
	$(BIN)/python -m tests.bench.js
	$(BIN)/python -m tests.bench.edit_run
	$(BIN)/python -m tests.bench.serve
	$(BIN)/python -m tests.bench.ray
	$(BIN)/python -m tests.bench.models
	$(BIN)/python -m tests.bench.code_mode
	$(BIN)/python -m tests.bench.telemetry
	$(BIN)/python -m tests.bench.page

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .coverage .coverage.*
