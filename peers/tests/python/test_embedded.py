"""The embedded example (generated-examples/embedded: an axum application with routes of its own
that merges `generated::router(state)`, serving the conformance spec) through the Python SDK
client, over HTTP in both eras: the handshake, tools/list equal to the spec's tools, a tool call,
one elicitation round, and the application's own `GET /healthz` answering alongside.

The binary is `$MCPGEN_PEERS_BIN_DIR/embedded` (peers/run.sh builds it) or, when that is unset, a
`cargo build -p embedded` of generated-examples run here once. It takes `--bind` only (no
`--transport`): it is an application, not the command line of a generated server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import LEGACY, MODERN, PROTOCOL, ROOT, Script, free_port, run
from mcp import Client
from mcp.types import TextContent

SPEC = json.loads((ROOT / "specs/conformance.json").read_text())
CALL_TIMEOUT = 20.0

eras = pytest.mark.parametrize("era", [pytest.param(LEGACY, id="http-legacy"),
                                       pytest.param(MODERN, id="http-2026-07-28")])

_binary: list[Path] = []


def embedded_binary() -> Path:
    if not _binary:
        bin_dir = os.environ.get("MCPGEN_PEERS_BIN_DIR")
        if bin_dir:
            _binary.append(Path(bin_dir) / "embedded")
        else:
            out = subprocess.run(
                ["cargo", "build", "--manifest-path", str(ROOT / "generated-examples/Cargo.toml"),
                 "-p", "embedded", "--message-format=json"],
                check=True, stdout=subprocess.PIPE, text=True,
            ).stdout
            for line in out.splitlines():
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "embedded":
                    _binary.append(Path(msg["executable"]))
    assert _binary and _binary[0].is_file(), f"no embedded binary {_binary}"
    return _binary[0]


@contextlib.contextmanager
def application():
    """Starts `embedded --bind 127.0.0.1:<free port>`; yields its base URL."""
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen([str(embedded_binary()), "--bind", f"127.0.0.1:{port}", "--log-level", "error"],
                                stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.poll() is None:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.02)
            else:
                continue  # exited (port taken in between) or never listened: try another port
            yield f"http://127.0.0.1:{port}"
            return
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    raise AssertionError("embedded: the application did not start")


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.status, answer.read().decode()


@eras
def test_embedded_serves_mcp_beside_its_own_routes(era):
    async def body():
        script = Script().accept({"username": "ada", "email": "ada@example.com"})
        with application() as base:
            async with Client(f"{base}/mcp", mode=era, cache=None, elicitation_callback=script.on_elicit,
                              sampling_callback=script.on_sample, list_roots_callback=script.on_roots,
                              message_handler=script.on_message) as client:
                assert client.protocol_version == PROTOCOL[era]
                # The application's own route answers while the MCP session is open.
                assert await asyncio.to_thread(get, f"{base}/healthz") == (200, "ok\n")
                tools = await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)
                assert sorted(t.name for t in tools.tools) == sorted(SPEC["tools"])
                r = await asyncio.wait_for(client.call_tool("test_simple_text", {}), CALL_TIMEOUT)
                assert r.is_error is False, r
                assert r.content == [TextContent(type="text", text="This is a simple text response for testing.")]
                r = await asyncio.wait_for(client.call_tool("test_elicitation", {"message": "Who are you?"}),
                                           CALL_TIMEOUT)
                assert r.is_error is False, r
                assert [c.text for c in r.content] == [
                    "User response: action=accept, username=ada, email=ada@example.com"]
            assert await asyncio.to_thread(get, f"{base}/") == (200, "An axum application; MCP is served at /mcp.\n")
        assert script.asked == [("form", "Who are you?", SPEC["$defs"]["UserInfo"])]
        assert script.unscripted == 0

    run(body())
