# Quick start (see README):  make demo   |   make test
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## demo: set up, ingest samples/ (not its licence list) into the local index (offline embedder), then search it
demo: $(VENV)/.installed
	$(PY) -m chunking ingest samples/ --exclude SOURCES.md
	$(PY) -m chunking search "how to print the question papers" -k 3

## test: set up (Python and npm dev tools), then run every test; pytest's "no tests ran" (exit 5) is a failure
test: $(VENV)/.installed-dev node_modules/.installed
	$(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests ran" >&2; exit 1; fi; exit $$rc

clean:
	rm -rf $(VENV) node_modules .chunking .pytest_cache .hypothesis
