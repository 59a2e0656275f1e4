# Quick start: `make demo` and `make test` on a fresh machine (Debian + Python 3.11+).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit sshd chromium prometheus clickhouse screenshot schema bench golden drift clean fuzz

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

# The HTML report tests load the page in headless Chromium; install it when it is missing.
chromium:
	@command -v chromium >/dev/null || { \
	  echo "installing chromium (needed by the HTML report tests)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || { echo "could not install chromium: run 'apt-get install chromium' as root"; exit 1; }; }

# The Prometheus source tests run a real Prometheus (the binary, never the packaged service); install it when missing.
prometheus:
	@command -v /usr/bin/prometheus >/dev/null || { \
	  echo "installing prometheus (needed by the Prometheus source tests)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null) \
	  || { echo "could not install prometheus: run 'apt-get install prometheus' as root"; exit 1; }; }

# The log-store tests start a real ClickHouse on loopback (Debian's 18.16); install it when it is missing.
clickhouse:
	@test -x /usr/sbin/clickhouse-server || { \
	  echo "installing clickhouse-server (needed by the ClickHouse source tests)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clickhouse-server >/dev/null) \
	  || { echo "could not install clickhouse-server: run 'apt-get install clickhouse-server' as root"; exit 1; }; }

# docs/img/report.png, the README's picture: the HTML report of the story fixture (on its 2x RTX A6000).
screenshot: $(STAMP) chromium
	@mkdir -p docs/img
	@tmp=$$(mktemp -d); \
	$(BIN)/logdoctor diagnose fixtures/logs/story/vllm-dflash-tp2-a6000.log --gpu "RTX A6000" --format html -o $$tmp/report.html; \
	test $$? -le 1 || exit 1; \
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$$tmp/profile \
	  --window-size=1280,1500 --screenshot=$(CURDIR)/docs/img/report.png file://$$tmp/report.html >/dev/null 2>&1; \
	status=$$?; rm -rf $$tmp; test $$status -eq 0 && echo "wrote docs/img/report.png"

# docs/schema/report.schema.json, the JSON Schema of `--format json`, from the pydantic models
# (tests/report/test_json_schema.py fails until it is regenerated after a model change).
schema: $(STAMP)
	$(BIN)/python -m logdoctor.report.json > docs/schema/report.schema.json
	$(BIN)/python -m logdoctor.engine.advisories > docs/schema/advisory.schema.json

lint: $(STAMP)
	$(BIN)/ruff check logdoctor tests bench
	$(BIN)/ruff format --check logdoctor tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) sshd chromium prometheus clickhouse
	$(BIN)/pytest -n 2

test: lint typecheck unit

# Long fuzz run (docs/security.md): FUZZ_EXAMPLES mutated corpus logs through every output format and one CLI
# command each, plus generated rule and suppression files, in FUZZ_JOBS processes; FUZZ_SEED picks the inputs (the
# same seed, count and shards run the same inputs). It needs the venv and nothing else (no network, no servers):
# with the venv in place it installs nothing. `make test` runs the same harness with a few examples.
FUZZ_EXAMPLES ?= 25000
FUZZ_JOBS     ?= 2
FUZZ_SEED     ?= 0
fuzz: $(if $(wildcard $(BIN)/pytest),,$(STAMP))
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_SHARDS=$$(( $(FUZZ_JOBS) * 16 )) FUZZ_SEED=$(FUZZ_SEED) \
	  $(BIN)/pytest tests/fuzz -n $(FUZZ_JOBS) -p no:cacheprovider -W ignore::hypothesis.errors.HypothesisWarning

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
