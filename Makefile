# mindbank — the two set-up commands are `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)

.PHONY: demo test fuzz lint format bench-recall bench-retain clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $@

## demo: create .venv, install, run the end-to-end demo (ARGS=path/to/locomo.json for another conversation)
demo: $(STAMP)
	$(BIN)/mindbank demo $(ARGS)

## test: install dev dependencies, Debian's Chromium (browser tests) and a throwaway PostgreSQL (+pgvector), run the
## whole suite on both backends
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	scripts/chromium.sh install
	scripts/postgres.sh install
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
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .

bench-recall: $(STAMP)
	$(BIN)/python -m bench locomo-recall ../shared/data/locomo/*.json

bench-retain: $(STAMP)
	$(BIN)/python -m bench retain ../shared/data/locomo/conv-26.json

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
