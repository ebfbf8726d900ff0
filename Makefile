# Quick start (see README):  make demo   |   make test
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo eval test setup azurite clean

$(VENV)/.installed: requirements.txt pyproject.toml
	@echo "Installing the Python packages into $(VENV): a minute or two, once"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt requirements-ocr.txt
	@echo "Installing the test and OCR packages into $(VENV): a few minutes, once"
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## demo: set up, ingest samples/ (not its licence list nor its question set) into the local index (offline
## embedder), then ask a question: the first hit cites samples/amc-manual.en.pdf#page=61, where the answer is
demo: $(VENV)/.installed
	$(PY) -m chunking ingest samples/ --exclude SOURCES.md --exclude 'eval/*'
	$(PY) -m chunking search "how can students correct a ticked box" -k 3

## eval: measure retrieval on samples/ with its question set (hit@k, MRR, nDCG@10; hybrid against BM25 alone)
eval: $(VENV)/.installed
	$(PY) -m chunking eval samples/ --questions samples/eval/questions.jsonl --exclude SOURCES.md

## test: set up (Python and npm dev tools), then run every test; pytest's "no tests ran" (exit 5) is a failure
test: $(VENV)/.installed-dev node_modules/.installed
	$(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests ran" >&2; exit 1; fi; exit $$rc

## setup: only set up (.venv with the package, and the npm dev tools: Azurite)
setup: $(VENV)/.installed node_modules/.installed

## azurite: run the storage emulator for `func start` and the CLI (blob 10000, queue 10001, table 10002 on
## 127.0.0.1; data in .azurite/; Ctrl-C stops it). --skipApiVersionCheck: the storage SDKs of requirements.txt
## send API versions newer than Azurite knows.
AZURITE_DIR   ?= .azurite
AZURITE_FLAGS ?=
azurite: node_modules/.installed
	node_modules/.bin/azurite --silent --skipApiVersionCheck --disableTelemetry --location $(AZURITE_DIR) \
	  --blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 $(AZURITE_FLAGS)

clean:
	rm -rf $(VENV) node_modules .chunking .azurite .pytest_cache .hypothesis
