# Thin verbs over the tools configured in pyproject.toml.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS_BOT := sample_bots/js_random

.PHONY: install run test lint proto bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(JS_BOT)/node_modules/.installed: $(JS_BOT)/package.json
	if [ -f $(JS_BOT)/package.json ]; then cd $(JS_BOT) && npm install --no-audit --no-fund --silent && touch node_modules/.installed; fi

install: $(STAMP)
	@# the browser tests drive Debian's chromium (Playwright never downloads a browser)
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; fi
	@if [ -f $(JS_BOT)/package.json ]; then $(MAKE) --no-print-directory $(JS_BOT)/node_modules/.installed; fi

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
