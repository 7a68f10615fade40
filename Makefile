# Thin verbs over the tools configured in pyproject.toml.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS_BOT := sample_bots/js_random

.PHONY: install run test lint proto bench clean proto-tools
# What tests/test_proto_compile.py needs to compile the .proto as C++ and Java (Debian).
PROTO_TOOLS := protobuf-compiler libprotobuf-dev libprotobuf-java g++ default-jdk-headless

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(JS_BOT)/node_modules/.installed: $(JS_BOT)/package.json
	if [ -f $(JS_BOT)/package.json ]; then cd $(JS_BOT) && npm install --no-audit --no-fund --silent && touch node_modules/.installed; fi

install: $(STAMP) proto-tools
	@# the browser tests drive Debian's chromium (Playwright never downloads a browser)
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; fi
	@if [ -f $(JS_BOT)/package.json ]; then $(MAKE) --no-print-directory $(JS_BOT)/node_modules/.installed; fi

# Installs the Debian packages above only when one is missing, and only as root with apt-get;
# otherwise says what to install (the compile test then fails, naming the missing tool).
proto-tools:
	@if command -v protoc >/dev/null && command -v g++ >/dev/null && command -v javac >/dev/null \
		&& [ -d /usr/include/google/protobuf ] && [ -f /usr/share/java/protobuf.jar ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(PROTO_TOOLS); \
	else echo "note: install $(PROTO_TOOLS) for tests/test_proto_compile.py"; fi

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
