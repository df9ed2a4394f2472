"""Timeouts and concurrency limits (issue 21, item 4), with the Python SDK client, over the cells
{stdio, http} x {legacy, 2026-07-28}, against the `operations` example
(`generated-examples/operations`: `nap` has a timeout of 400 ms and at most 2 calls at once,
`work` has no limit of its own, the spec's `limits.timeoutMs` is 20000; `stats(tag)` counts the
calls of a tag that started, finished or were dropped).

What is asserted, exactly:
- a call past its timeout is an `isError` result with the runtime's text, answered when the
  timeout passes (not when the handler would have ended), and its handler's future is dropped
  (`dropped`, never `finished`);
- a tool's `maxConcurrency`: a third call waits for a slot (and runs once one is free); three
  short calls all succeed, the third after the first two;
- `--max-concurrency N` bounds the calls of every tool together, and a call that finds no slot
  within its timeout gets the "no slot of the server's N" text;
- `--tool-timeout` replaces `limits.timeoutMs` but not a tool's own `timeoutMs`.

The tool gate's own "no slot of the tool's 2" text needs calls arriving at the same instant (a
later arrival's deadline falls after the earlier calls give their slots back); it is pinned by
the runtime's unit tests on a paused clock (`runtime/src/tests.rs`, `gates`).

The helpers (the binary, the servers with extra flags, `stats`) are shared with
`test_cancellation.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import CELLS, MODERN, PROTOCOL, ROOT, Script, binary, free_port, run
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

SERVER = "operations"
NAP_TIMEOUT = "Error executing tool nap: the call did not finish within its timeout of 400 ms"
CALL_TIMEOUT = 20.0

# --- shared helpers ---------------------------------------------------------------------------

_built: dict[str, Path] = {}


def ops_binary() -> Path:
    """The `operations` example's binary: the suite's (`conftest.binary`) when it lists it, else
    the one in `$MCPGEN_PEERS_BIN_DIR`, else one `cargo build -p operations` here."""
    try:
        return binary(SERVER)
    except KeyError:
        pass
    bin_dir = os.environ.get("MCPGEN_PEERS_BIN_DIR")
    if bin_dir and SERVER not in _built:
        _built[SERVER] = Path(bin_dir) / SERVER
    if SERVER not in _built:
        out = subprocess.run(
            ["cargo", "build", "--manifest-path", str(ROOT / "generated-examples/Cargo.toml"),
             "-p", SERVER, "--message-format=json"],
            check=True, stdout=subprocess.PIPE, text=True,
        ).stdout
        for line in out.splitlines():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if (msg.get("reason") == "compiler-artifact" and msg.get("executable")
                    and msg["target"]["name"] == SERVER):
                _built[SERVER] = Path(msg["executable"])
    path = _built[SERVER]
    assert path.is_file(), f"no binary {path}"
    return path


@contextlib.contextmanager
def http_server(args: list[str]):
    """Starts `operations --transport http --bind 127.0.0.1:<free port> <args>`; yields the /mcp
    URL (conftest's `http_server`, with extra flags)."""
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [str(ops_binary()), "--transport", "http", "--bind", f"127.0.0.1:{port}",
             "--log-level", "error", *args],
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
    raise AssertionError("operations: the HTTP server did not start")


@contextlib.asynccontextmanager
async def connect(transport: str, era: str, args: list[str] = (), **callbacks: Any):
    """Starts the operations server over `transport` with the flags `args` and connects the
    Python client in `era` (with the given callbacks)."""
    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            target: Any = StdioServerParameters(command=str(ops_binary()),
                                                args=["--log-level", "error", *args])
        else:
            target = stack.enter_context(http_server(list(args)))
        async with Client(target, mode=era, cache=None, **callbacks) as client:
            assert client.protocol_version == PROTOCOL[era]
            yield client


def new_tag() -> str:
    return uuid.uuid4().hex


async def call(client: Client, tool: str, arguments: dict):
    return await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)


async def stats(client: Client, tag: str) -> dict:
    """`stats(tag)`: {started, finished, dropped, stopped_early}."""
    r = await call(client, "stats", {"tag": tag})
    assert r.is_error is False, r
    return r.structured_content


async def wait_stats(client: Client, tag: str, until, within: float = 1.0) -> dict:
    """Polls `stats(tag)` until `until(counts)` holds or `within` seconds passed; the last counts."""
    deadline = time.monotonic() + within
    while True:
        counts = await stats(client, tag)
        if until(counts) or time.monotonic() > deadline:
            return counts
        await asyncio.sleep(0.02)


def counts(started: int, finished: int, dropped: int, stopped_early: int = 0) -> dict:
    return {"started": started, "finished": finished, "dropped": dropped, "stopped_early": stopped_early}


def ok_text(r) -> str:
    """A successful call's text (one text block, structuredContent {"result": text})."""
    assert r.is_error is False, r
    assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
    assert r.structured_content == {"result": r.content[0].text}, r
    return r.content[0].text


def error_text(r) -> str:
    """An isError result's text (one text block, no structuredContent)."""
    assert r.is_error is True, r
    assert r.structured_content is None, r
    assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
    return r.content[0].text


async def timed(coro):
    """(result, seconds it took)."""
    start = time.monotonic()
    result = await coro
    return result, time.monotonic() - start


# --- timeouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transport,era", CELLS)
def test_a_call_past_its_timeout_is_an_error_and_its_handler_is_dropped(transport, era):
    async def body():
        async with connect(transport, era) as client:
            tag = new_tag()
            r, took = await timed(call(client, "nap", {"ms": 2000, "tag": tag}))
            assert error_text(r) == NAP_TIMEOUT
            assert 0.4 <= took < 1.0, took
            assert await stats(client, tag) == counts(started=1, finished=0, dropped=1)
            # Within its timeout, the same tool answers normally.
            r = await call(client, "nap", {"ms": 10, "tag": tag})
            assert ok_text(r) == "Slept 10 ms."
            assert await stats(client, tag) == counts(started=2, finished=1, dropped=1)

    run(body())


# --- a tool's maxConcurrency ------------------------------------------------------------------


@pytest.mark.parametrize("transport,era", CELLS)
def test_a_tools_third_call_waits_for_one_of_its_two_slots(transport, era):
    async def body():
        async with connect(transport, era) as client:
            # Three short calls at once: two run, the third runs when one is done.
            tag = new_tag()
            start = time.monotonic()
            results = await asyncio.gather(*(call(client, "nap", {"ms": 150, "tag": tag}) for _ in range(3)))
            took = time.monotonic() - start
            assert [ok_text(r) for r in results] == ["Slept 150 ms."] * 3
            assert took >= 0.3, took
            assert await stats(client, tag) == counts(started=3, finished=3, dropped=0)

            # Two long calls hold both slots until they time out; a third, started after them,
            # starts only then (it is not counted before) and succeeds.
            tag, late = new_tag(), new_tag()
            start = time.monotonic()
            long_calls = [asyncio.create_task(call(client, "nap", {"ms": 1000, "tag": tag})) for _ in range(2)]
            assert (await wait_stats(client, tag, lambda c: c["started"] == 2))["started"] == 2
            # The third arrives well after the two: its own 400 ms (queueing included) then
            # leave it that much time to run once they time out (sent at once, it could time out
            # too on a slow machine); it is looked at before they do.
            await asyncio.sleep(0.12)
            third = asyncio.create_task(call(client, "nap", {"ms": 10, "tag": late}))
            await asyncio.sleep(0.08)
            assert await stats(client, late) == counts(started=0, finished=0, dropped=0)
            assert [error_text(await t) for t in long_calls] == [NAP_TIMEOUT, NAP_TIMEOUT]
            assert ok_text(await third) == "Slept 10 ms."
            assert time.monotonic() - start >= 0.4
            assert await stats(client, tag) == counts(started=2, finished=0, dropped=2)
            assert await stats(client, late) == counts(started=1, finished=1, dropped=0)

    run(body())


# --- the server-wide limits (flags) -----------------------------------------------------------


@pytest.mark.parametrize("transport,era", CELLS)
def test_max_concurrency_bounds_every_tool_together(transport, era):
    async def body():
        async with connect(transport, era, ["--max-concurrency", "1"]) as client:
            tag = new_tag()
            start = time.monotonic()
            results = await asyncio.gather(*(call(client, "work", {"ms": 300, "tag": tag}) for _ in range(2)))
            took = time.monotonic() - start
            assert [ok_text(r) for r in results] == ["Worked 300 ms."] * 2
            assert took >= 0.6, took

            # `work` (timeout 20 s) holds the one slot for 1 s; `nap` (timeout 400 ms) started
            # 200 ms later finds no slot within its timeout.
            tag = new_tag()
            holder = asyncio.create_task(call(client, "work", {"ms": 1000, "tag": tag}))
            await asyncio.sleep(0.2)
            r, took = await timed(call(client, "nap", {"ms": 10, "tag": tag}))
            assert error_text(r) == (
                "Error executing tool nap: too many calls at once: no slot of the server's 1 "
                "(--max-concurrency) came free within the call's timeout of 400 ms"
            )
            assert 0.4 <= took < 0.8, took
            assert ok_text(await holder) == "Worked 1000 ms."
            assert await stats(client, tag) == counts(started=1, finished=1, dropped=0)

    run(body())


@pytest.mark.parametrize("transport,era", CELLS)
def test_tool_timeout_replaces_the_specs_but_not_a_tools_own(transport, era):
    async def body():
        async with connect(transport, era, ["--tool-timeout", "200ms"]) as client:
            tag = new_tag()
            r, took = await timed(call(client, "work", {"ms": 1000, "tag": tag}))
            assert error_text(r) == (
                "Error executing tool work: the call did not finish within its timeout of 200 ms"
            )
            assert 0.2 <= took < 0.8, took
            r, took = await timed(call(client, "nap", {"ms": 1000, "tag": tag}))
            assert error_text(r) == NAP_TIMEOUT
            assert 0.4 <= took < 1.0, took
            assert await stats(client, tag) == counts(started=2, finished=0, dropped=2)

    run(body())
