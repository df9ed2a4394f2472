"""The drain (issue 33, item 7) with the Python SDK client, over HTTP in a legacy (2025-11-25)
session, against the `operations` example (`quote` asks "Buy <item> for <price> cents?" and
answers "Bought <item> for <price> cents." once accepted).

The client calls `quote`; when the question arrives the server gets SIGTERM. While the call waits
for its answer, the server drains, and asserted exactly:
- a new session (`initialize` on a new connection) and a new call in an existing session get
  `503`, `Retry-After: 5`, `Connection: close` and the JSON-RPC error
  `-32000 "Server is shutting down; try again later"` with the request's id; the same call made
  through the Python client raises that error (`MCPError`);
- the client's answer then reaches the waiting call, which completes with its exact result;
- a second, idle Python client ends its session during the drain (`DELETE`, answered 204: the
  Python client warns "Session termination failed" on anything but 200 or 204);
- with nothing left in flight the server exits 0 long before its drain timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import socket
import subprocess
import time

import httpx2
import pytest
from conftest import LEGACY, PROTOCOL, free_port
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult, TextContent
from test_limits import ops_binary

DRAIN_TIMEOUT_S = 30
DRAINING = {"code": -32000, "message": "Server is shutting down; try again later"}


@contextlib.contextmanager
def drain_server():
    """`operations --transport http` with `--drain-timeout 30s`: yields (process, base URL)."""
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [str(ops_binary()), "--transport", "http", "--bind", f"127.0.0.1:{port}",
             "--log-level", "error", "--drain-timeout", f"{DRAIN_TIMEOUT_S}s"],
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
            yield proc, f"http://127.0.0.1:{port}"
            return
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    raise AssertionError("operations: the HTTP server did not start")


HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def initialize(id_: int) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL[LEGACY], "capabilities": {"elicitation": {"form": {}}},
                       "clientInfo": {"name": "raw", "version": "1"}}}


def in_session(session: str) -> dict:
    return {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": PROTOCOL[LEGACY]}


async def sse_messages(response: httpx2.Response):
    """The JSON-RPC messages of an SSE answer, as they arrive."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            text = "".join(data)
            data.clear()
            if text:
                yield json.loads(text)


async def raw_session(http: httpx2.AsyncClient, url: str) -> str:
    """A legacy session opened over raw HTTP (initialize, initialized): its id."""
    r = await http.post(url, json=initialize(1), headers=HEADERS)
    assert r.status_code == 200, r
    session = r.headers["mcp-session-id"]
    r = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers=in_session(session))
    assert r.status_code == 202, r
    return session


def assert_draining(r: httpx2.Response, id_: int) -> None:
    assert r.status_code == 503, r
    assert r.headers["content-type"] == "application/json"
    assert r.headers["retry-after"] == "5"
    assert r.headers["connection"] == "close"
    assert r.json() == {"jsonrpc": "2.0", "id": id_, "error": DRAINING}


def test_an_elicitation_answered_after_sigterm_completes_its_call(caplog):
    caplog.set_level(logging.WARNING, logger="mcp")

    async def body():
        asked, answer_now = asyncio.Event(), asyncio.Event()
        messages: list[str] = []

        async def on_elicit(ctx, params):
            messages.append(params.message)
            asked.set()
            await answer_now.wait()
            return ElicitResult(action="accept", content={"ok": True})

        with drain_server() as (proc, base):
            url = f"{base}/mcp"
            connected, leave = asyncio.Event(), asyncio.Event()

            async def idle_client():
                # A second Python client, idle: it leaves during the drain.
                async with Client(url, mode=LEGACY, cache=None):
                    connected.set()
                    await leave.wait()

            async with httpx2.AsyncClient(timeout=10) as http:
                other = await raw_session(http, url)
                idle = asyncio.create_task(idle_client())
                await asyncio.wait_for(connected.wait(), 10)
                # A raw quote in flight too: answered last, it keeps the server up until the
                # Python client has left (else the server exits, rightly, when the Python
                # client's call ends, and the client's own DELETE finds nobody).
                quote = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": "quote", "arguments": {"item": "kettle"}}}
                async with http.stream("POST", url, json=quote, headers=in_session(other)) as raw:
                    assert raw.status_code == 200
                    raw_messages = sse_messages(raw)
                    raw_question = await asyncio.wait_for(anext(raw_messages), 10)
                    assert raw_question["method"] == "elicitation/create"
                    assert raw_question["params"]["message"] == "Buy kettle for 720 cents?"

                    async with Client(url, mode=LEGACY, cache=None, elicitation_callback=on_elicit) as client:
                        assert client.protocol_version == PROTOCOL[LEGACY]
                        call = asyncio.create_task(client.call_tool("quote", {"item": "kite"}))
                        await asyncio.wait_for(asked.wait(), 10)
                        assert messages == ["Buy kite for 480 cents?"]

                        proc.send_signal(signal.SIGTERM)
                        for _ in range(100):
                            if (await http.get(f"{base}/readyz")).status_code == 503:
                                break
                            await asyncio.sleep(0.02)
                        signalled = time.monotonic()

                        # New work is refused: a session, a call in an existing session, and a
                        # call through the Python client.
                        assert_draining(await http.post(url, json=initialize(7), headers=HEADERS), 7)
                        late = {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                "params": {"name": "work", "arguments": {"ms": 1, "tag": "late"}}}
                        assert_draining(await http.post(url, json=late, headers=in_session(other)), 8)
                        with pytest.raises(MCPError) as refused:
                            await asyncio.wait_for(client.call_tool("work", {"ms": 1, "tag": "late"}), 10)
                        assert (refused.value.error.code, refused.value.error.message) == (
                            DRAINING["code"], DRAINING["message"])

                        # The idle client leaves: its DELETE is answered as it expects.
                        leave.set()
                        await asyncio.wait_for(idle, 10)
                        assert [rec.getMessage() for rec in caplog.records] == []

                        # The answer after the signal: the call completes.
                        answer_now.set()
                        r = await asyncio.wait_for(call, 10)
                        assert r.is_error is False, r
                        assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
                        assert r.content[0].text == "Bought kite for 480 cents."
                        assert r.structured_content == {"result": "Bought kite for 480 cents."}
                        assert messages == ["Buy kite for 480 cents?"]
                    # The Python client left (its DELETE answered too).
                    assert [rec.getMessage() for rec in caplog.records] == []

                    # The raw quote's answer: its call completes, and nothing is in flight.
                    answer = {"jsonrpc": "2.0", "id": raw_question["id"],
                              "result": {"action": "accept", "content": {"ok": True}}}
                    r = await http.post(url, json=answer, headers=in_session(other))
                    assert r.status_code == 202, r
                    raw_result = await asyncio.wait_for(anext(raw_messages), 10)
                    assert raw_result == {"jsonrpc": "2.0", "id": 3, "result": {
                        "content": [{"type": "text", "text": "Bought kettle for 720 cents."}],
                        "structuredContent": {"result": "Bought kettle for 720 cents."},
                        "isError": False}}
            code = await asyncio.to_thread(proc.wait, DRAIN_TIMEOUT_S)
            assert code == 0
            took = time.monotonic() - signalled
            assert took < DRAIN_TIMEOUT_S / 3, f"exited {took:.1f} s after the signal"

    asyncio.run(asyncio.wait_for(body(), 60))
