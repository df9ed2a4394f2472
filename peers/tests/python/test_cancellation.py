"""Cancellation (issue 21, item 5), with the Python SDK client over the cells {stdio, http} x
{legacy, 2026-07-28}, and raw JSON-RPC over stdio, against the `operations` example.

The Python client cancels a call its caller gave up on: over stdio and legacy HTTP it sends
`notifications/cancelled`; on 2026-07-28 over HTTP it aborts the request's POST, which is the
cancellation signal there. Asserted exactly:
- the handler's future is dropped at once (`stats(tag)`: `dropped` 1, `finished` 0 within 1 s),
  resolvers included;
- blocking work that watches `Context::cancellation_token` stops early (`grind`);
- a legacy call waiting for the answer to its `elicitation/create` has that request cancelled
  too: the server sends `notifications/cancelled` for it, and the client's elicitation callback
  is interrupted (`CancelledError`, the Python SDK's default for a cancelled inbound request);
- a cancelled request gets no response at all (raw JSON-RPC over stdio, both eras: after the
  cancellation, the next line is the next request's answer and no line with the cancelled id
  follows within 2 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import subprocess
import threading
import time

import anyio
import pytest
from conftest import CELLS, LEGACY, MODERN, PROTOCOL
from mcp.types import ElicitResult
from test_limits import connect, counts, new_tag, ops_binary, stats, wait_stats

LEGACY_CELLS = [p for p in CELLS if p.values[1] == LEGACY]


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("transport,era", CELLS)
def test_a_cancelled_call_is_dropped(transport, era):
    async def body():
        async with connect(transport, era) as client:
            tag = new_tag()
            with pytest.raises(TimeoutError):
                with anyio.fail_after(0.5):
                    await client.call_tool("work", {"ms": 10000, "tag": tag})
            got = await wait_stats(client, tag, lambda c: c["dropped"] == 1)
            assert got == counts(started=1, finished=0, dropped=1)
            # The server goes on serving.
            r = await client.call_tool("work", {"ms": 1, "tag": tag})
            assert r.is_error is False and r.content[0].text == "Worked 1 ms.", r

    run(body())


@pytest.mark.parametrize("transport,era", CELLS)
def test_cancelled_blocking_work_sees_the_token_and_stops(transport, era):
    async def body():
        async with connect(transport, era) as client:
            tag = new_tag()
            with pytest.raises(TimeoutError):
                with anyio.fail_after(0.5):
                    await client.call_tool("grind", {"ms": 10000, "tag": tag})
            got = await wait_stats(client, tag, lambda c: c["dropped"] == 1 and c["stopped_early"] == 1)
            assert got == counts(started=1, finished=0, dropped=1, stopped_early=1)

    run(body())


@pytest.mark.parametrize("transport,era", LEGACY_CELLS)
def test_a_cancelled_call_cancels_its_pending_elicitation(transport, era):
    async def body():
        asked, interrupted = asyncio.Event(), asyncio.Event()
        messages: list[str] = []

        async def on_elicit(ctx, params):
            messages.append(params.message)
            if interrupted.is_set():
                return ElicitResult(action="accept", content={"ok": True})
            asked.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                interrupted.set()
                raise
            return ElicitResult(action="decline")

        async with connect(transport, era, elicitation_callback=on_elicit) as client:
            call = asyncio.create_task(client.call_tool("quote", {"item": "kettle"}))
            await asyncio.wait_for(asked.wait(), 10)
            assert messages == ["Buy kettle for 720 cents?"]
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            # The server cancelled its elicitation/create: the callback was interrupted.
            await asyncio.wait_for(interrupted.wait(), 1.0)
            # The session goes on: the same question again, answered this time.
            r = await asyncio.wait_for(client.call_tool("quote", {"item": "kettle"}), 10)
            assert r.is_error is False and r.content[0].text == "Bought kettle for 720 cents.", r
            assert messages == ["Buy kettle for 720 cents?"] * 2

    run(body())


# --- raw JSON-RPC over stdio: no response at all ----------------------------------------------

META = {"io.modelcontextprotocol/protocolVersion": PROTOCOL[MODERN],
        "io.modelcontextprotocol/clientCapabilities": {}}


class RawStdio:
    """The operations server over stdio, spoken to line by line."""

    def __init__(self, era: str):
        self.era = era
        self.proc = subprocess.Popen([str(ops_binary()), "--log-level", "error"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        if era == LEGACY:
            self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": PROTOCOL[LEGACY], "capabilities": {},
                                  "clientInfo": {"name": "raw", "version": "0"}}})
            assert self.recv()["id"] == 1
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: dict):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 10.0) -> dict:
        return json.loads(self.lines.get(timeout=timeout))

    def call(self, id: int, tool: str, arguments: dict) -> dict:
        params = {"name": tool, "arguments": arguments}
        if self.era == MODERN:
            params["_meta"] = META
        return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}

    def stats(self, id: int, tag: str) -> dict:
        self.send(self.call(id, "stats", {"tag": tag}))
        answer = self.recv()
        assert answer["id"] == id, answer
        return answer["result"]["structuredContent"]

    def close(self):
        self.proc.kill()
        self.proc.wait()


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_a_cancelled_request_gets_no_response_at_all(era):
    peer = RawStdio(era)
    try:
        tag = new_tag()
        peer.send(peer.call(7, "work", {"ms": 10000, "tag": tag}))
        deadline = time.monotonic() + 5
        poll = 100
        while peer.stats(poll, tag)["started"] == 0:
            assert time.monotonic() < deadline, "work never started"
            poll += 1
            time.sleep(0.02)
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "the user gave up"}})
        peer.send(peer.call(8, "stats", {"tag": tag}))
        assert peer.recv()["id"] == 8
        # The handler was dropped (within 1 s)...
        deadline = time.monotonic() + 1
        poll = 200
        while (got := peer.stats(poll, tag))["dropped"] == 0 and time.monotonic() < deadline:
            poll += 1
            time.sleep(0.02)
        assert got == counts(started=1, finished=0, dropped=1)
        # ... and no line answers id 7 (nor anything else) within 2 s.
        with pytest.raises(queue.Empty):
            line = peer.lines.get(timeout=2.0)
            raise AssertionError(f"an unexpected line: {line}")
    finally:
        peer.close()
