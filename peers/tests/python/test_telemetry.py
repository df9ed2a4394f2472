"""Traces and metrics by the OpenTelemetry semantic conventions for MCP, end to end.

The Python SDK client (mcp==2.3.0) with the OpenTelemetry Python SDK records a CLIENT span per
request and injects its `traceparent` into `params._meta`; the `operations` example exports OTLP
over HTTP to a receiver in this test, which decodes the real protobuf (`otlp_receiver.py`). In
every cell ({stdio, http} x {legacy, 2026-07-28}): the server span's parent is the client's span,
its name and attributes follow the conventions, there is one child per resolver, and the
operation histogram has a point for each method. Over HTTP, the `traceparent` header is the
parent when `_meta` has none, and a link when both differ. `--metrics-bind` serves the Prometheus
text. With no OTEL variables, nothing is exported.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from conftest import CELLS, LEGACY, MODERN, PROTOCOL, Script, Session, binary, free_port, run
from otlp_receiver import OtlpReceiver

# The client's spans: set once, before any Client is built.
CLIENT_SPANS = InMemorySpanExporter()
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(CLIENT_SPANS))
trace.set_tracer_provider(_provider)

SPAN_KIND_INTERNAL, SPAN_KIND_SERVER, SPAN_KIND_CLIENT = 1, 2, 3
STATUS_CODE_ERROR = 2
UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


def otel_env(receiver: OtlpReceiver) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
        "OTEL_SERVICE_NAME": "operations-test",
    })
    return env


@contextlib.contextmanager
def http_process(env: dict, *extra: str):
    """`operations --transport http` on a free port with `env`; yields (process, /mcp URL).
    Stopped with SIGTERM (which flushes the exporters) and awaited."""
    port = free_port()
    proc = subprocess.Popen(
        [str(binary("operations")), "--transport", "http", "--bind", f"127.0.0.1:{port}",
         "--log-level", "error", *extra],
        stdin=subprocess.DEVNULL, env=env,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert proc.poll() is None, "the server exited"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.02)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def session_calls(target, era: str) -> None:
    """`quote` (its elicitation accepted), `fail`, an unknown tool, and `tools/list`."""
    script = Script().accept({"ok": True}).accept({"ok": True})
    async with Client(target, mode=era, cache=None, elicitation_callback=script.on_elicit) as client:
        assert client.protocol_version == PROTOCOL[era]
        session = Session(client)
        assert await session.text("quote", {"item": "book"}) != ""
        assert (await session.call("fail", {})).is_error is True
        code, message, _ = await session.protocol_error("nope", {})
        assert (code, message) == (-32602, "Unknown tool: nope")
        await session.tools()


def exercise(transport: str, era: str, receiver: OtlpReceiver) -> None:
    env = otel_env(receiver)
    if transport == "stdio":
        target = StdioServerParameters(command=str(binary("operations")), args=["--log-level", "error"], env=env)
        run(session_calls(target, era))
    else:
        with http_process(env) as (_proc, url):
            run(session_calls(url, era))


def wait_for(predicate, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def client_spans(method_target: str) -> list:
    return [s for s in CLIENT_SPANS.get_finished_spans() if s.name == f"MCP send {method_target}"]


@pytest.mark.parametrize("transport,era", CELLS)
def test_server_spans_are_children_of_the_client_spans(transport: str, era: str) -> None:
    CLIENT_SPANS.clear()
    with OtlpReceiver() as receiver:
        exercise(transport, era, receiver)
        # stdio: the server flushed when stdin closed; HTTP: on SIGTERM.
        spans = wait_for(lambda: [s for s in receiver.spans() if s["name"] == "tools/list"] and receiver.spans())
        assert receiver.refused == []
        servers = [s for s in spans if s["kind"] == SPAN_KIND_SERVER]
        quotes = [s for s in servers if s["name"] == "tools/call quote"]
        senders = client_spans("tools/call quote")
        rounds = 1 if era == LEGACY else 2
        assert len(quotes) == len(senders) == rounds
        by_parent = {s["parent_span_id"]: s for s in quotes}
        for sender in senders:
            server = by_parent[format(sender.context.span_id, "016x")]
            assert server["trace_id"] == format(sender.context.trace_id, "032x")
        for quote in quotes:
            attrs = quote["attributes"]
            assert attrs["mcp.method.name"] == "tools/call"
            assert attrs["gen_ai.tool.name"] == "quote"
            assert attrs["gen_ai.operation.name"] == "execute_tool"
            assert attrs["mcp.protocol.version"] == PROTOCOL[era]
            assert attrs["network.transport"] == ("pipe" if transport == "stdio" else "tcp")
            if transport == "http":
                assert (attrs["network.protocol.name"], attrs["network.protocol.version"]) == ("http", "1.1")
            else:
                assert "client.address" not in attrs and "network.protocol.name" not in attrs
            if transport == "http" and era == LEGACY:
                assert re.fullmatch(UUID4, attrs["mcp.session.id"]), attrs["mcp.session.id"]
            else:
                assert "mcp.session.id" not in attrs
            assert quote["resource"]["service.name"] == "operations-test"
        ids = sorted(s.attributes["jsonrpc.request.id"] for s in senders if "jsonrpc.request.id" in s.attributes)
        if ids:
            assert ids == sorted(q["attributes"]["jsonrpc.request.id"] for q in quotes)
        # The final round's resolvers, in order.
        final = quotes[-1] if era == LEGACY else by_parent[format(senders[-1].context.span_id, "016x")]
        children = [s for s in spans if s["parent_span_id"] == final["span_id"]]
        resolvers = [(s["name"], s["attributes"]["mcpgen.resolver.asked"]) for s in children
                     if s["name"].startswith("resolve ")]
        assert resolvers == [("resolve find_item", False), ("resolve price", False), ("resolve confirm", True)]
        confirm = next(s for s in children if s["name"] == "resolve confirm")
        under_confirm = [s for s in spans if s["parent_span_id"] == confirm["span_id"]]
        if era == LEGACY:
            assert [(s["name"], s["kind"]) for s in under_confirm] == [("elicitation/create", SPAN_KIND_CLIENT)]
        else:
            assert [(s["name"], s["attributes"]["mcpgen.question.outcome"]) for s in under_confirm] == [
                ("question confirm", "answered")]
            first = by_parent[format(senders[0].context.span_id, "016x")]
            first_confirm = next(s for s in spans if s["parent_span_id"] == first["span_id"]
                                 and s["name"] == "resolve confirm")
            assert [(s["name"], s["attributes"]["mcpgen.question.outcome"]) for s in spans
                    if s["parent_span_id"] == first_confirm["span_id"]] == [("question confirm", "asked")]
        fail = next(s for s in servers if s["name"] == "tools/call fail")
        assert fail["attributes"]["error.type"] == "tool_error"
        assert fail["status_code"] == STATUS_CODE_ERROR
        nope = next(s for s in servers if s["name"] == "tools/call")
        assert "gen_ai.tool.name" not in nope["attributes"]
        assert nope["attributes"]["error.type"] == "-32602"
        assert nope["attributes"]["rpc.response.status_code"] == "-32602"
        assert (nope["status_code"], nope["status_message"]) == (STATUS_CODE_ERROR, "Unknown tool: nope")

        metrics = wait_for(lambda: receiver.metrics().get("mcp.server.operation.duration") and receiver.metrics())
        metric, _resource = metrics["mcp.server.operation.duration"]
        assert metric.unit == "s"
        counts = {}
        for point in metric.histogram.data_points:
            assert list(point.explicit_bounds) == BUCKETS
            attrs = {kv.key: kv.value.string_value for kv in point.attributes}
            key = (attrs["mcp.method.name"], attrs.get("gen_ai.tool.name"), attrs.get("error.type"))
            counts[key] = counts.get(key, 0) + point.count
        expected = {
            ("tools/call", "quote", None): rounds,
            ("tools/call", "fail", "tool_error"): 1,
            ("tools/call", None, "-32602"): 1,
            # The client lists the tools itself too (for their output schemas): each list it sent.
            ("tools/list", None, None): len(client_spans("tools/list")),
        }
        assert expected[("tools/list", None, None)] >= 1
        if era == LEGACY:
            expected[("initialize", None, None)] = 1
        assert counts == expected
        session = metrics.get("mcp.server.session.duration")
        if era == LEGACY or transport == "stdio":
            assert session is not None
            assert sum(p.count for p in session[0].histogram.data_points) == 1


def raw_call(url: str, headers: dict, meta: dict) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                                 "io.modelcontextprotocol/clientCapabilities": {}, **meta}}}
    r = httpx2.post(url, json=body, headers={"Accept": "application/json, text/event-stream",
                                            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list",
                                            **headers})
    assert r.status_code == 200, r.text


def test_the_http_header_is_the_parent_without_meta_and_a_link_beside_it() -> None:
    header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    meta = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with OtlpReceiver() as receiver:
        with http_process(otel_env(receiver)) as (_proc, url):
            raw_call(url, {"traceparent": header}, {})
            raw_call(url, {"traceparent": header}, {"traceparent": meta})
        lists = wait_for(lambda: len([s for s in receiver.spans() if s["name"] == "tools/list"]) == 2
                         and [s for s in receiver.spans() if s["name"] == "tools/list"])
        by_trace = {s["trace_id"]: s for s in lists}
        from_header = by_trace["4bf92f3577b34da6a3ce929d0e0e4736"]
        assert (from_header["parent_span_id"], from_header["links"]) == ("00f067aa0ba902b7", [])
        from_meta = by_trace["0af7651916cd43dd8448eb211c80319c"]
        assert from_meta["parent_span_id"] == "b7ad6b7169203331"
        assert from_meta["links"] == [("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")]


def test_prometheus_text_at_metrics_bind() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    port = free_port()
    with http_process(env, "--metrics-bind", f"127.0.0.1:{port}") as (_proc, url):
        async def calls():
            async with Client(url, mode=LEGACY, cache=None) as client:
                for _ in range(2):
                    assert (await Session(client).call("fail", {})).is_error is True
        run(calls())
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        lines = text.splitlines()
        assert "# TYPE mcp_server_operation_duration_seconds histogram" in lines
        count = [line for line in lines if line.startswith("mcp_server_operation_duration_seconds_count{")
                 and 'gen_ai_tool_name="fail"' in line]
        assert len(count) == 1, count
        assert 'error_type="tool_error"' in count[0] and 'mcp_method_name="tools/call"' in count[0]
        assert count[0].endswith(" 2")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
        assert refused.value.code == 404


def test_prometheus_text_next_to_stdio() -> None:
    """`--metrics-bind` serves the metrics of a stdio server too, while its client is connected."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    port = free_port()
    target = StdioServerParameters(command=str(binary("operations")),
                                   args=["--log-level", "error", "--metrics-bind", f"127.0.0.1:{port}"], env=env)

    scraped: list[str] = []

    async def calls() -> None:
        async with Client(target, mode=LEGACY, cache=None) as client:
            session = Session(client)
            for _ in range(3):
                assert (await session.call("fail", {})).is_error is True
            # Scraped while the client is still connected (the server lives as long as its stdin).
            scraped.append(await asyncio.to_thread(
                lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()))

    run(calls())
    lines = scraped[0].splitlines()
    count = [line for line in lines if line.startswith("mcp_server_operation_duration_seconds_count{")
             and 'gen_ai_tool_name="fail"' in line]
    assert len(count) == 1, count
    assert 'network_transport="pipe"' in count[0] and 'error_type="tool_error"' in count[0]
    assert count[0].endswith(" 3")


def test_with_telemetry_off_nothing_is_exported() -> None:
    with OtlpReceiver() as receiver:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        with http_process(env) as (_proc, url):
            async def calls():
                async with Client(url, mode=MODERN, cache=None) as client:
                    await Session(client).tools()
            run(calls())
        time.sleep(0.5)
        assert receiver.requests == [] and receiver.refused == []


@pytest.mark.parametrize("variable,value", [
    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
])
def test_another_otlp_protocol_is_refused_at_start(variable: str, value: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", variable: value})
    done = subprocess.run([str(binary("operations")), "--transport", "stdio"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=env, timeout=10)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"error: {variable}={value}: this server exports OTLP over HTTP (http/protobuf) only\n"
