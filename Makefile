# Thin verbs over the tools configured in pyproject.toml.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS_BOT := sample_bots/js_random
# The starter kits (sample_bots/*_random, docs/stdio.md): built when their source is newer.
C_BOT := sample_bots/c_random/bot
RUST_BOT := sample_bots/rust_random/target/release/rust_random
JAVA_BOT := sample_bots/java_random/build/RandomBot.class

.PHONY: install test-deps kits sandbox postgresql run test soak lint proto bench clean proto-tools compile
# The mypyc build of the rules engine and the wire encoder (tools/compile_rules.py), rebuilt
# when a source changes; optional: without mypyc or a C compiler, arena.rules and arena.rpc
# import their Python sources.
COMPILED := arena/rules/_compiled/manifest.json
WIRE_SOURCES := arena/rpc/encode.py arena/rpc/wirecache.py arena/rpc/convert.py
# The rules tests and the encoder's byte-for-byte test run a second time on the Python sources
# (ARENA_PURE_RULES=1: the engine and the encoder). (The privacy
# property test, the referee's message code over 1,200 games, runs once: test_rules_build.py checks
# that both builds play every variant view for view alike.)
PURE_TESTS := tests/test_rules_*.py tests/test_cards.py tests/test_golden.py tests/test_encode.py
# What tests/test_proto_compile.py needs to compile the .proto as C++ and Java (Debian).
PROTO_TOOLS := protobuf-compiler libprotobuf-dev libprotobuf-java g++ default-jdk-headless

# Two installs: what `make run` needs (the package, and mypyc to compile the engine: the
# `build` extra), and what the tests need on top (the `dev` extra: pytest, Ray, psycopg,
# Playwright, ...). `make run` stays light.
RUN_STAMP := $(VENV)/.installed-run
$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[build]'
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(JS_BOT)/node_modules/.installed: $(JS_BOT)/package.json
	if [ -f $(JS_BOT)/package.json ]; then cd $(JS_BOT) && npm install --no-audit --no-fund --silent && touch node_modules/.installed; fi

# What `make run` needs: the package, the sandbox, the compiled engine, the JS bot's packages.
install: $(RUN_STAMP) sandbox compile
	@if [ -f $(JS_BOT)/package.json ]; then $(MAKE) --no-print-directory $(JS_BOT)/node_modules/.installed; fi

# What the tests need on top: the dev extra, protoc and the C++/Java toolchains, PostgreSQL,
# and Debian's chromium for the browser tests (Playwright never downloads a browser).
test-deps: install $(STAMP) proto-tools postgresql
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium || (apt-get update -q \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)); fi

$(COMPILED): $(RUN_STAMP) $(wildcard arena/rules/*.py) $(WIRE_SOURCES) tools/compile_rules.py
	$(BIN)/python tools/compile_rules.py || { rm -rf arena/rules/_compiled arena/rpc/_compiled; \
		echo "note: the rules engine was not compiled (mypyc or a C compiler missing?);" \
		"arena.rules and arena.rpc use their Python sources"; }

compile: $(RUN_STAMP)
	@$(MAKE) --no-print-directory $(COMPILED)

kits: $(C_BOT) $(RUST_BOT) $(JAVA_BOT)

$(C_BOT): sample_bots/c_random/bot.c
	gcc -O2 -std=c11 -Wall -Wextra -o $@ $<

$(RUST_BOT): sample_bots/rust_random/src/main.rs sample_bots/rust_random/Cargo.toml
	cargo build --offline --release --quiet --manifest-path sample_bots/rust_random/Cargo.toml
	touch $@

$(JAVA_BOT): sample_bots/java_random/RandomBot.java
	javac -d sample_bots/java_random/build $<

# Installs the Debian packages above only when one is missing, and only as root with apt-get;
# otherwise says what to install (the compile test then fails, naming the missing tool).
proto-tools:
	@if command -v protoc >/dev/null && command -v g++ >/dev/null && command -v javac >/dev/null \
		&& [ -d /usr/include/google/protobuf ] && [ -f /usr/share/java/protobuf.jar ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(PROTO_TOOLS) \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $(PROTO_TOOLS)); \
	else echo "note: install $(PROTO_TOOLS) for tests/test_proto_compile.py"; fi

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

# Debian's PostgreSQL server for tests/test_postgres.py (the tests start their own server on a
# temporary folder and port; the package's own cluster is not needed): installed with apt-get
# when its binaries are missing and we are root, otherwise those tests skip, saying why.
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing postgresql (for the PostgreSQL tests)"; \
	    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || \
	     (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      postgresql >/dev/null)) || echo "note: could not install postgresql with apt-get" >&2; \
	  else \
	    echo "note: install Debian's postgresql for tests/test_postgres.py (they skip without it)"; \
	  fi; }

run: install
	$(BIN)/arena tournament --fresh sample_bots/tournament.toml

# The main pass runs over TEST_WORKERS pytest-xdist workers, one test file at a time each
# (--dist loadfile: a file's module fixtures are built once, in one worker).
TEST_WORKERS ?= 2
test: test-deps kits
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile
	ARENA_PURE_RULES=1 $(BIN)/python -m pytest -q $(PURE_TESTS)

# The soak tests (marked `slow`) at full size: make test runs them too, in their short default
# form (README "Tests").
soak: test-deps
	ARENA_SOAK=1 $(BIN)/python -m pytest -q -m slow

lint: install $(STAMP)
	$(BIN)/ruff check arena tests
	$(BIN)/mypy

proto: install $(STAMP)
	$(BIN)/python -m arena.rpc.codegen

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache arena.db replays logs $(C_BOT) arena/rules/_compiled arena/rpc/_compiled sample_bots/rust_random/target \
		sample_bots/java_random/build
