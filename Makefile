# `make run` and `make test` each work as the first command on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WORKSPACE ?= $(CURDIR)/workspace
INTEROP := tests/interop
NODE_STAMP := $(INTEROP)/node_modules/.installed

.PHONY: run test test-fast lint format bench bench-tools bench-long bench-all screenshots clean

# setuptools tells every editable install of a package whose folders are mapped (our
# prompts/ is indexer/prompts) that it uses an import hook, in ten lines pip shows even
# with --quiet ("Editable installation. ... folders in your working directory with the
# same name"); its other modes warn too (compat: to be removed; strict: a link tree to
# keep). That one notice alone is left out: a failed build still says why.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade "pip>=25.1"
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install --quiet -e . --group dev
	touch $(STAMP)

# Node clients for the interop tests; skipped (the tests say so) when node is missing.
# `npm ci` installs exactly the committed package-lock.json, never prompts, never rewrites it.
$(NODE_STAMP): $(INTEROP)/package.json $(INTEROP)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(INTEROP) && npm ci --no-audit --no-fund --loglevel=error </dev/null \
			&& touch node_modules/.installed; \
	else echo "npm not found: interop tests will be skipped"; fi

run: $(STAMP)
	$(BIN)/indexer serve --workspace $(WORKSPACE)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy indexer agent_client shared bench

# The tests write bytecode (an empty PYTHONDONTWRITEBYTECODE is unset): with it set, every
# `indexer serve` and `agent-client` a test starts compiled the checkout's modules again
# (0.3-0.4 CPU-s a server start, a quarter of it), and each worker's pytest rewrote the
# asserts of every test module it imported. Four e2e files, -n 2 at load 10-15: 83, 80
# user CPU-s against 73, 74 (the first run writing it). The files are __pycache__/
# (git ignores them), as `make bench` compiles them.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest

# Three workers on two cores: most of a test's time is a server process starting or
# answering, waiting rather than computing (a full run: 386 s, against 500-650 s with two).
# Work stealing: each worker takes a third of the tests in order and steals from the
# others' ends once done, so a module's tests mostly stay on one worker and its
# fixtures (a server, a browser) start once. The default (load) hands the run's last
# tests out a few at a time: the web modules started their server and browser on two or
# three workers (a full run's web set-ups over 0.8 s: 15 taking 61 s, against 8 taking
# 33 s; tests/web alone: 129-154 CPU-s, against 112-114 s). (``loadfile`` would run
# one of test_api_fuzz's 33 cases: they share a node id.)
test: $(STAMP) $(NODE_STAMP) lint
	$(PYTEST) -q -n 3 --dist worksteal

# Unit and in-memory tests only (no server processes, browser or npm clients): < 1 min.
test-fast: $(STAMP)
	$(PYTEST) -q -n 2 -m "not e2e"

# The performance goals in one run, as ratios to floors measured beside them: the short
# form on a 10,000-note vault (< 5 min), the long one on 100,000 notes. Bytecode first,
# as an installed wheel has it: with PYTHONDONTWRITEBYTECODE set, the checkout's modules
# would be compiled again at every server start.
BYTECODE := $(BIN)/python -m compileall -q indexer shared agent_client bench

# The grep figure's floor is ripgrep (Debian's package), installed when missing and root.
bench-tools:
	@command -v rg >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null; \
	else echo "ripgrep (rg) is missing: the grep figure will have no floor"; fi; }

bench: $(STAMP) bench-tools
	$(BYTECODE)
	$(BIN)/python -m bench.perf_goals

bench-long: $(STAMP) bench-tools
	$(BYTECODE)
	$(BIN)/python -m bench.perf_goals --long

# Every benchmark in bench/, one table each (tens of minutes).
bench-all: $(STAMP) bench-tools
	$(BYTECODE)
	$(BIN)/python -m bench

# The README's pictures of the browser page (needs Debian's chromium, as the tests do).
screenshots: $(STAMP)
	UI_SCREENSHOTS=docs $(BIN)/pytest -q tests/web/test_ui_browser.py

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) $(INTEROP)/node_modules
