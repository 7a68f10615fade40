"""Shared fixtures. Helpers of the end-to-end tests live in test_e2e_support.py."""

from __future__ import annotations

import shutil

import pytest
from test_e2e_support import JS_BOT


@pytest.fixture(scope="session")
def js_random() -> list[str]:
    """The command of the sample Node.js bot. A missing node or npm install fails the test
    (it is not skipped): the JS bot is part of what the end-to-end tests pin."""
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: the end-to-end tests need it for the JS sample bot")
    if not (JS_BOT.parent / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail(f"{JS_BOT.parent} has no node_modules: run `make install`")
    return ["node", str(JS_BOT)]
