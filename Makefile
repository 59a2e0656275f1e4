# Quick start: `make demo` and `make test` on a fresh machine (Debian + Python 3.11+).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit sshd bench golden drift clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/logdoctor diagnose fixtures/logs/story/vllm-dflash-tp2-a6000.log; test $$? -le 1

# The SSH tests talk to a real OpenSSH server; install it when it is missing.
sshd:
	@{ test -x /usr/sbin/sshd && command -v sudo >/dev/null && command -v useradd >/dev/null; } || { \
	  echo "installing openssh-server and sudo (needed by the SSH tests)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client sudo passwd >/dev/null) \
	  || { echo "could not install openssh-server: run 'apt-get install openssh-server sudo' as root"; exit 1; }; }

lint: $(STAMP)
	$(BIN)/ruff check logdoctor tests bench
	$(BIN)/ruff format --check logdoctor tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) sshd
	$(BIN)/pytest -n 2

test: lint typecheck unit

golden: $(STAMP)
	$(BIN)/logdoctor test --update

bench: $(STAMP)
	$(BIN)/python bench/bench_parse.py

# Drift check against engine releases (docs/drift.md): `make drift`, or pin `make drift VLLM=0.33.0 SGLANG=0.5.23`
# (several versions: VLLM="0.32.1 0.33.0"). Wheels are cached in .drift-cache/ (not in git).
VLLM   ?=
SGLANG ?=
drift: $(STAMP)
	$(BIN)/python -m bench.drift --vllm "$(VLLM)" --sglang "$(SGLANG)"

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
