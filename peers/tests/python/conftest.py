"""Harness for the Python-client peer tests (mcp==2.3.0, the official Python SDK client).

Every test runs over the cells {stdio, http} x {legacy, 2026-07-28}: it starts one of the example
binaries (bookshop, files, bistro) itself, connects `mcp.Client` with `mode="legacy"` (initialize
handshake, 2025-11-25) or `mode="2026-07-28"` (pinned, per-request `_meta`, MRTR driven by the
client), answers questions from a script and records every question asked.

Binaries: `$MCPGEN_PEERS_BIN_DIR` (set by peers/run.sh after one cargo build) or, when unset, a
`cargo build --message-format=json` of the examples run here once (bookshop, files, bistro,
differential for `test_differential.py`, which speaks raw JSON-RPC over stdio itself, and fleet
for `test_replicas.py`, which runs it as three replicas behind nginx, `fleet.py`).

Cells whose 2026-07-28 run goes through multi-round-trip requests are marked `needs_mrtr`
(documentation only: every cell runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CreateMessageResult,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    Root,
    TextContent,
)

ROOT = Path(__file__).resolve().parents[3]
EXPECTED_TOOLS = json.loads((Path(__file__).resolve().parents[1] / "expected_tools.json").read_text())
LEGACY, MODERN = "legacy", "2026-07-28"
PROTOCOL = {LEGACY: "2025-11-25", MODERN: "2026-07-28"}
CALL_TIMEOUT = 20.0

CELLS = [
    pytest.param("stdio", LEGACY, id="stdio-legacy"),
    pytest.param("stdio", MODERN, id="stdio-2026-07-28"),
    pytest.param("http", LEGACY, id="http-legacy"),
    pytest.param("http", MODERN, id="http-2026-07-28"),
]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_mrtr: the 2026-07-28 cells use multi-round-trip requests")


# --- binaries ---------------------------------------------------------------------------------

_binaries: dict[str, Path] = {}


def binary(name: str) -> Path:
    if not _binaries:
        bin_dir = os.environ.get("MCPGEN_PEERS_BIN_DIR")
        if bin_dir:
            for n in ("bookshop", "files", "bistro", "differential", "fleet", "operations"):
                _binaries[n] = Path(bin_dir) / n
        else:
            out = subprocess.run(
                ["cargo", "build", "--manifest-path", str(ROOT / "generated-examples/Cargo.toml"),
                 "-p", "bookshop", "-p", "files", "-p", "bistro", "-p", "differential", "-p", "fleet",
                 "-p", "operations",
                 "--message-format=json"],
                check=True, stdout=subprocess.PIPE, text=True,
            ).stdout
            for line in out.splitlines():
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
                    _binaries[msg["target"]["name"]] = Path(msg["executable"])
    path = _binaries[name]
    assert path.is_file(), f"no binary {path}"
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(name: str):
    """Starts `<name> --transport http --bind 127.0.0.1:<free port>`; yields the /mcp URL."""
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [str(binary(name)), "--transport", "http", "--bind", f"127.0.0.1:{port}",
             "--log-level", "error"],
            stdin=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.poll() is None:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.02)
            else:
                continue  # exited (port taken in between) or never listened: try another port
            yield f"http://127.0.0.1:{port}/mcp"
            return
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    raise AssertionError(f"{name}: the HTTP server did not start")


# --- the scripted client ----------------------------------------------------------------------


@dataclass
class Script:
    """Scripted answers and everything the server asked or notified."""

    answers: deque = field(default_factory=deque)  # ElicitResult, in order
    sample_text: str = "unscripted"
    asked: list = field(default_factory=list)  # ("form", message, schema) | ("url", message, url, id) | ("sample", params) | ("roots",)
    notifications: list = field(default_factory=list)  # (method, params)
    unscripted: int = 0

    def accept(self, content: dict) -> "Script":
        self.answers.append(ElicitResult(action="accept", content=content))
        return self

    def answer(self, action: str) -> "Script":
        self.answers.append(ElicitResult(action=action))
        return self

    async def on_elicit(self, ctx, params):
        if isinstance(params, ElicitRequestURLParams):
            self.asked.append(("url", params.message, params.url, params.elicitation_id))
        else:
            self.asked.append(("form", params.message, params.requested_schema))
        if self.answers:
            return self.answers.popleft()
        self.unscripted += 1
        return ElicitResult(action="decline")

    async def on_sample(self, ctx, params):
        dumped = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        dumped.pop("_meta", None)
        self.asked.append(("sample", dumped))
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=self.sample_text),
                                   model="fake-model", stop_reason="endTurn")

    async def on_roots(self, ctx):
        self.asked.append(("roots",))
        return ListRootsResult(roots=[Root(uri="file:///home/user/proj")])

    async def on_message(self, message):
        method = getattr(message, "method", None)
        if method is not None and method.startswith("notifications/"):
            params = getattr(message, "params", None)
            if params is not None and hasattr(params, "model_dump"):
                params = params.model_dump(by_alias=True, exclude_none=True, mode="json")
            self.notifications.append((method, params))


class Session:
    def __init__(self, client: Client):
        self.client = client

    async def call(self, tool: str, arguments: dict):
        return await asyncio.wait_for(self.client.call_tool(tool, arguments), CALL_TIMEOUT)

    async def text(self, tool: str, arguments: dict) -> str:
        """A successful call: one text block, structuredContent {"result": text}."""
        r = await self.call(tool, arguments)
        assert r.is_error is False, r
        assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
        text = r.content[0].text
        assert r.structured_content == {"result": text}, r
        return text

    async def error_text(self, tool: str, arguments: dict) -> str:
        """An isError result: one text block, no structuredContent."""
        r = await self.call(tool, arguments)
        assert r.is_error is True, r
        assert r.structured_content is None, r
        assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
        return r.content[0].text

    async def protocol_error(self, tool: str, arguments: dict) -> tuple[int, str, Any]:
        """A JSON-RPC error: (code, message, data)."""
        try:
            r = await self.call(tool, arguments)
        except MCPError as e:
            return e.code, e.message, e.data
        raise AssertionError(f"expected a JSON-RPC error, got {r}")

    async def tools(self) -> list[dict]:
        result = await asyncio.wait_for(self.client.list_tools(), CALL_TIMEOUT)
        return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]


@contextlib.asynccontextmanager
async def connect(server: str, transport: str, era: str, script: Script | None, *, capabilities: bool = True):
    """Starts `server` over `transport` and connects the Python client in `era`.

    With `capabilities=False` the client registers no callbacks, so it declares no elicitation,
    sampling or roots capability."""
    callbacks: dict[str, Any] = {}
    if capabilities:
        assert script is not None
        callbacks = dict(elicitation_callback=script.on_elicit, sampling_callback=script.on_sample,
                         list_roots_callback=script.on_roots)
    if script is not None:
        callbacks["message_handler"] = script.on_message
    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            target: Any = StdioServerParameters(command=str(binary(server)), args=["--log-level", "error"])
        else:
            target = stack.enter_context(http_server(server))
        async with Client(target, mode=era, cache=None, **callbacks) as client:
            assert client.protocol_version == PROTOCOL[era]
            yield Session(client)


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))
