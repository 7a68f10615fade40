# Thin verbs over the tools configured in pyproject.toml.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS_BOT := sample_bots/js_random

.PHONY: install sandbox run test lint proto bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(JS_BOT)/node_modules/.installed: $(JS_BOT)/package.json
	if [ -f $(JS_BOT)/package.json ]; then cd $(JS_BOT) && npm install --no-audit --no-fund --silent && touch node_modules/.installed; fi

install: $(STAMP) sandbox
	@if [ -f $(JS_BOT)/package.json ]; then $(MAKE) --no-print-directory $(JS_BOT)/node_modules/.installed; fi

# bubblewrap sandboxes every launched bot (README "Running a contest safely"): installed with
# apt-get when missing and we are root (CI), otherwise a clear message; quick once present.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (sandbox for launched bots)"; \
	    (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	     (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null)) || \
	    { echo "error: could not install bubblewrap with apt-get" >&2; exit 1; }; \
	  else \
	    echo "bubblewrap (bwrap) is missing: the referee runs launched bots in its sandbox." >&2; \
	    echo "  install it as root: apt-get install bubblewrap (Fedora: dnf install bubblewrap)," >&2; \
	    echo "  or set [sandbox] allow_unsandboxed = true in your config (not for a contest)." >&2; \
	  fi; }

run: install
	$(BIN)/arena tournament --fresh sample_bots/tournament.toml

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check arena tests
	$(BIN)/mypy

proto: install
	$(BIN)/python -m arena.rpc.codegen

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache arena.db replays
