"""The conformance fixture server (generated-examples/conformance, from specs/conformance.json)
through the Python SDK client, over HTTP in both eras (legacy 2025-11-25 and 2026-07-28).

The official conformance suite (peers/conformance/run.sh) checks most fixtures by shape only
(a text block exists, a mimeType is set, an image has data); these tests pin the exact values the
spec and its handlers define (peers/conformance/FIXTURES.md §6): texts, base64 data, MIME types,
URIs, prompt messages, completion values, the questions asked and the final texts of the asking
tools, with this client's callbacks answering.

The binary is `$MCPGEN_PEERS_BIN_DIR/conformance` (peers/run.sh builds it) or, when that is
unset, a `cargo build -p conformance` of generated-examples run here once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import LEGACY, MODERN, PROTOCOL, ROOT, Script, free_port, run
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged
from mcp.types import ElicitResult, InputRequiredResult, PromptReference, ResourceTemplateReference, TextContent

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SPEC = json.loads((ROOT / "specs/conformance.json").read_text())
FORMS = SPEC["$defs"]
CALL_TIMEOUT = 20.0

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
ROOT_URI = "file:///home/user/proj"  # what conftest.Script.on_roots answers

eras = pytest.mark.parametrize("era", [pytest.param(LEGACY, id="http-legacy"),
                                       pytest.param(MODERN, id="http-2026-07-28")])
modern_only = pytest.mark.parametrize("era", [pytest.param(MODERN, id="http-2026-07-28")])
legacy_only = pytest.mark.parametrize("era", [pytest.param(LEGACY, id="http-legacy")])


def form(message: str, schema: str) -> tuple:
    """A form question as conftest.Script records it; requestedSchema is the spec's $defs entry."""
    return ("form", message, FORMS[schema])


def sample(text: str, max_tokens: int) -> tuple:
    return ("sample", {"messages": [{"role": "user", "content": {"type": "text", "text": text}}],
                       "maxTokens": max_tokens})


def invalid_answer(era: str, tool: str, resolver: str, violations: str) -> str:
    # The Python SDK's wording differs by era (shared/reference/mcp-protocol.md §2.4); what is
    # wrong follows it, the same on both.
    who = f"Resolver '{resolver}': Received" if era == LEGACY else f"Resolver '{resolver}' received"
    return (f"Error executing tool {tool}: {who} an accepted elicitation whose content "
            f"does not match the requested schema: {violations}")


# --- server and client ------------------------------------------------------------------------

_binary: list[Path] = []


def conformance_binary() -> Path:
    if not _binary:
        bin_dir = os.environ.get("MCPGEN_PEERS_BIN_DIR")
        if bin_dir:
            _binary.append(Path(bin_dir) / "conformance")
        else:
            out = subprocess.run(
                ["cargo", "build", "--manifest-path", str(ROOT / "generated-examples/Cargo.toml"),
                 "-p", "conformance", "--message-format=json"],
                check=True, stdout=subprocess.PIPE, text=True,
            ).stdout
            for line in out.splitlines():
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if (msg.get("reason") == "compiler-artifact" and msg.get("executable")
                        and msg["target"]["name"] == "conformance"):
                    _binary.append(Path(msg["executable"]))
    assert _binary and _binary[0].is_file(), f"no conformance binary ({_binary})"
    return _binary[0]


@contextlib.contextmanager
def http_server():
    """Starts `conformance --transport http --bind 127.0.0.1:<free port>`; yields the /mcp URL."""
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [str(conformance_binary()), "--transport", "http", "--bind", f"127.0.0.1:{port}",
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
    raise AssertionError("conformance: the HTTP server did not start")


@contextlib.asynccontextmanager
async def connect(era: str, script: Script | None = None, *, elicit: bool = True, sampling: bool = True,
                  roots: bool = True, log_level: str | None = None, logs: list | None = None):
    """The Python client on a fresh server; the callbacks given declare the client capabilities."""
    script = script if script is not None else Script()
    callbacks: dict[str, Any] = {"message_handler": script.on_message}
    if elicit:
        callbacks["elicitation_callback"] = script.on_elicit
    if sampling:
        callbacks["sampling_callback"] = script.on_sample
    if roots:
        callbacks["list_roots_callback"] = script.on_roots
    if logs is not None:
        async def on_log(params):
            logs.append((params.level, params.data))
        callbacks["logging_callback"] = on_log
    with http_server() as url:
        async with Client(url, mode=era, cache=None, log_level=log_level, **callbacks) as client:
            assert client.protocol_version == PROTOCOL[era]
            yield client


async def call(client: Client, tool: str, arguments: dict | None = None, **kwargs):
    return await asyncio.wait_for(client.call_tool(tool, arguments, **kwargs), CALL_TIMEOUT)


def dump(items) -> list[dict]:
    return [i.model_dump(by_alias=True, exclude_none=True, mode="json") for i in items]


def content(result) -> list[dict]:
    """The content blocks of a successful call of a tool without output schema."""
    assert result.is_error is False, result
    assert result.structured_content is None, result
    return dump(result.content)


def only_text(result) -> str:
    blocks = content(result)
    assert len(blocks) == 1 and blocks[0]["type"] == "text", blocks
    return blocks[0]["text"]


async def text(client: Client, tool: str, arguments: dict | None = None, **kwargs) -> str:
    return only_text(await call(client, tool, arguments, **kwargs))


async def error_text(client: Client, tool: str, arguments: dict | None = None) -> str:
    r = await call(client, tool, arguments)
    assert r.is_error is True, r
    assert r.structured_content is None, r
    assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
    return r.content[0].text


async def protocol_error(awaitable) -> tuple[int, str, Any]:
    try:
        r = await asyncio.wait_for(awaitable, CALL_TIMEOUT)
    except MCPError as e:
        return e.code, e.message, e.data
    raise AssertionError(f"expected a JSON-RPC error, got {r}")


async def eventually(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


# --- listings and capabilities ----------------------------------------------------------------


CAPABILITIES = {"logging": {}, "completions": {}, "prompts": {"listChanged": True},
                "resources": {"subscribe": True}, "tools": {"listChanged": True}}


@eras
def test_capabilities(era):
    async def body():
        async with connect(era) as client:
            if era == MODERN:  # a pinned 2026-07-28 client adopts no server/discover result by itself
                raw = await asyncio.wait_for(client.session.send_discover(PROTOCOL[MODERN]), CALL_TIMEOUT)
                assert PROTOCOL[MODERN] in raw["supportedVersions"]
                assert raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == SPEC["name"]
                caps = raw["capabilities"]
            else:
                caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
        # Exactly what the spec declares: logging, completions (prompt arguments declare `complete`),
        # listChanged for tools and prompts, resources.subscribe, and nothing else.
        assert caps == CAPABILITIES
    run(body())


@eras
def test_tools_list(era):
    async def body():
        async with connect(era) as client:
            tools = dump((await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)).tools)
        assert [(t["name"], t["description"]) for t in tools] == \
            [(name, tool["description"]) for name, tool in SPEC["tools"].items()]
        by_name = {t["name"]: t for t in tools}
        for name, tool in SPEC["tools"].items():
            # Inputs as written (resolved parameters never appear), no output schemas.
            if "input" in tool:
                assert by_name[name]["inputSchema"] == tool["input"], name
            else:  # no arguments
                assert by_name[name]["inputSchema"] in ({"type": "object"}, {"type": "object", "properties": {}}), name
            assert "outputSchema" not in by_name[name], name
    run(body())


@eras
def test_prompts_list(era):
    async def body():
        async with connect(era) as client:
            prompts = dump((await asyncio.wait_for(client.list_prompts(), CALL_TIMEOUT)).prompts)
        assert [(p["name"], p.get("title"), p["description"],
                 [(a["name"], a.get("description"), bool(a.get("required"))) for a in p.get("arguments", [])])
                for p in prompts] == \
            [(name, p.get("title"), p["description"],
              [(a, arg.get("description"), bool(arg.get("required"))) for a, arg in p.get("arguments", {}).items()])
             for name, p in SPEC["prompts"].items()]
    run(body())


@eras
def test_resources_and_templates_list(era):
    async def body():
        async with connect(era) as client:
            resources = dump((await asyncio.wait_for(client.list_resources(), CALL_TIMEOUT)).resources)
            templates = dump((await asyncio.wait_for(client.list_resource_templates(), CALL_TIMEOUT))
                             .resource_templates)
        keys = ("name", "title", "description", "mimeType")
        assert [(r["uri"], *(r.get(k) for k in keys)) for r in resources] == \
            [(uri, *(r.get(k) for k in keys)) for uri, r in SPEC["resources"].items()]
        # The suite's caching scenario reads the first listed resource.
        assert resources[0]["uri"] == "test://static-text"
        assert [(t["uriTemplate"], *(t.get(k) for k in keys)) for t in templates] == \
            [(uri, *(t.get(k) for k in keys)) for uri, t in SPEC["resourceTemplates"].items()]
    run(body())


# The conformance suite's json-schema-2020-12 scenario (pending, unscored; run.sh fails on it):
# its schema, literally as the suite's dist defines it.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]}, "else": {"required": ["email"]},
    "additionalProperties": False,
}


@eras
def test_json_schema_2020_12_tool(era):
    async def body():
        async with connect(era) as client:
            tools = dump((await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)).tools)
            [tool] = [t for t in tools if t["name"] == "json_schema_2020_12_tool"]
            assert tool["description"] == "Tool with JSON Schema 2020-12 features"
            # Every keyword kept.
            assert tool["inputSchema"] == JSON_SCHEMA_2020_12
            name = "json_schema_2020_12_tool"
            # What the schema accepts reaches the handler, every member in the typed value.
            assert await text(client, name, {"email": "a@b.c"}) == \
                'json_schema_2020_12_tool received {"email":"a@b.c"}'
            assert await text(client, name, {"contactMethod": "phone", "phone": "1"}) == \
                'json_schema_2020_12_tool received {"contactMethod":"phone","phone":"1"}'
            assert await text(client, name, {"name": "N", "phone": "1", "email": "a@b.c",
                                             "address": {"street": "S", "city": "C"}}) == \
                ('json_schema_2020_12_tool received {"address":{"city":"C","street":"S"},'
                 '"email":"a@b.c","name":"N","phone":"1"}')
            # What it refuses is an isError result listing every violation.
            assert await error_text(client, name, {"contactMethod": "phone", "email": "a@b.c"}) == \
                f"Error executing tool {name}: (root) (required): \"phone\" is a required property"
            assert await error_text(client, name, {"name": "N", "fax": "2"}) == (
                f"Error executing tool {name}: "
                "(root) (additionalProperties): Additional properties are not allowed ('fax' was unexpected)\n"
                "(root) (anyOf): {\"name\":\"N\",\"fax\":\"2\"} is not valid under any of the schemas listed in the 'anyOf' keyword\n"
                "(root) (required): \"email\" is a required property")
    run(body())


# --- content tools ----------------------------------------------------------------------------


@eras
def test_simple_text_without_arguments(era):
    async def body():
        script = Script()
        async with connect(era, script) as client:
            # No `arguments` key at all, as the suite sends it.
            assert await text(client, "test_simple_text") == "This is a simple text response for testing."
            assert await text(client, "test_simple_text", {}) == "This is a simple text response for testing."
        assert script.asked == []
    run(body())


@eras
def test_image_audio_embedded_and_mixed_content(era):
    async def body():
        async with connect(era) as client:
            assert content(await call(client, "test_image_content", {})) == \
                [{"type": "image", "data": PNG, "mimeType": "image/png"}]
            assert content(await call(client, "test_audio_content", {})) == \
                [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]
            assert content(await call(client, "test_embedded_resource", {})) == [
                {"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                                                  "text": "This is an embedded resource content."}}]
            assert content(await call(client, "test_multiple_content_types", {})) == [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                                                  "mimeType": "application/json",
                                                  "text": '{"test":"data","value":123}'}},
            ]
    run(body())


@eras
def test_error_handling_is_an_is_error_result(era):
    async def body():
        async with connect(era) as client:
            assert await error_text(client, "test_error_handling", {}) == \
                "Error executing tool test_error_handling: This tool intentionally returns an error for testing"
    run(body())


# --- logging and progress ---------------------------------------------------------------------

TOOL_LOGS = [("info", "Tool execution started"), ("info", "Tool processing data"),
             ("info", "Tool execution completed")]


@legacy_only
def test_logging_legacy_follows_set_level(era):
    async def body():
        logs: list = []
        async with connect(era, logs=logs) as client:
            # Until logging/setLevel, every level is sent.
            assert await text(client, "test_logging_tool", {}) == "Logging evaluated"
            await eventually(lambda: len(logs) == 1)
            assert logs == [("info", "Diagnostic trace logging activated")]
            logs.clear()
            assert (await asyncio.wait_for(client.set_logging_level("debug"), CALL_TIMEOUT)) is not None
            assert await text(client, "test_tool_with_logging", {}) == "Tool with logging executed successfully"
            await eventually(lambda: len(logs) == 3)
            assert logs == TOOL_LOGS
            logs.clear()
            await asyncio.wait_for(client.set_logging_level("warning"), CALL_TIMEOUT)
            assert await text(client, "test_tool_with_logging", {}) == "Tool with logging executed successfully"
            assert await text(client, "test_logging_tool", {}) == "Logging evaluated"
            await asyncio.sleep(0.3)
        assert logs == []
    run(body())


@modern_only
def test_logging_modern_only_with_log_level_meta(era):
    async def body():
        logs: list = []
        async with connect(era, logs=logs) as client:  # no logLevel in _meta: nothing is sent
            assert await text(client, "test_tool_with_logging", {}) == "Tool with logging executed successfully"
            assert await text(client, "test_logging_tool", {}) == "Logging evaluated"
            await asyncio.sleep(0.3)
        assert logs == []
        async with connect(era, logs=logs, log_level="debug") as client:
            assert await text(client, "test_tool_with_logging", {}) == "Tool with logging executed successfully"
            await eventually(lambda: len(logs) == 3)
            assert logs == TOOL_LOGS
            logs.clear()
            assert await text(client, "test_logging_tool", {}) == "Logging evaluated"
            await eventually(lambda: len(logs) == 1)
            assert logs == [("info", "Diagnostic trace logging activated")]
        logs.clear()
        async with connect(era, logs=logs, log_level="warning") as client:
            assert await text(client, "test_tool_with_logging", {}) == "Tool with logging executed successfully"
            await asyncio.sleep(0.3)
        assert logs == []
    run(body())


@eras
def test_progress(era):
    async def body():
        progress: list = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        async with connect(era) as client:
            assert await text(client, "test_tool_with_progress", {}, progress_callback=on_progress) == \
                "Tool with progress executed successfully"
            await eventually(lambda: len(progress) == 3)
            assert progress == [(0, 100, "Completed step 0 of 100"), (50, 100, "Completed step 50 of 100"),
                                (100, 100, "Completed step 100 of 100")]
            # Without a progress token nothing is reported, and the call still completes.
            assert await text(client, "test_tool_with_progress", {}) == "Tool with progress executed successfully"
        assert len(progress) == 3
    run(body())


# --- legacy-style asking tools (elicitation/create and sampling/createMessage mid-call) ---------


@pytest.mark.needs_mrtr
@eras
def test_sampling(era):
    async def body():
        script = Script()
        script.sample_text = "This is a test response from the client"
        async with connect(era, script) as client:
            assert await text(client, "test_sampling", {"prompt": "Test prompt for sampling"}) == \
                "LLM response: This is a test response from the client"
        assert script.asked == [sample("Test prompt for sampling", 100)]
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_elicitation_outcomes(era):
    async def body():
        script = (Script().accept({"username": "testuser", "email": "test@example.com"})
                  .answer("decline").answer("cancel"))
        async with connect(era, script) as client:
            message = {"message": "Please provide your information"}
            assert await text(client, "test_elicitation", message) == \
                "User response: action=accept, username=testuser, email=test@example.com"
            assert await text(client, "test_elicitation", message) == "User response: action=decline"
            assert await text(client, "test_elicitation", message) == "User response: action=cancel"
        assert script.asked == [form("Please provide your information", "UserInfo")] * 3
        assert script.unscripted == 0
    run(body())


SEP1034 = "Please review and update the form fields with defaults"
SEP1330 = "Please select options from the enum fields"


@pytest.mark.needs_mrtr
@eras
def test_elicitation_sep1034_defaults(era):
    async def body():
        script = (Script().accept({"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive",
                                   "verified": False})
                  .accept({"name": "Ann"})  # the omitted fields get the schema's defaults
                  .accept({"age": "old"}))
        async with connect(era, script) as client:
            tool = "test_elicitation_sep1034_defaults"
            assert await text(client, tool, {}) == (
                "Elicitation completed: action=accept, name=Jane Smith, age=25, score=88, status=inactive, "
                "verified=false")
            assert await text(client, tool, {}) == (
                "Elicitation completed: action=accept, name=Ann, age=30, score=95.5, status=active, "
                "verified=true")
            assert await error_text(client, tool, {}) == invalid_answer(
                era, tool, "sep1034_defaults", '/age (type): "old" is not of type "integer"')
        assert script.asked == [form(SEP1034, "DefaultsForm")] * 3
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_elicitation_sep1330_enums(era):
    async def body():
        script = (Script().accept({"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                                   "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]})
                  .accept({"titledSingle": "value3"})
                  .accept({"untitledSingle": "option9"})
                  .answer("decline"))
        async with connect(era, script) as client:
            tool = "test_elicitation_sep1330_enums"
            assert await text(client, tool, {}) == (
                "Elicitation completed: action=accept, untitledSingle=option1, titledSingle=value1, "
                "legacyEnum=opt1, untitledMulti=[option1, option2], titledMulti=[value1, value2]")
            assert await text(client, tool, {}) == (
                "Elicitation completed: action=accept, untitledSingle=none, titledSingle=value3, legacyEnum=none, "
                "untitledMulti=[], titledMulti=[]")
            assert await error_text(client, tool, {}) == invalid_answer(
                era, tool, "sep1330_enums",
                '/untitledSingle (enum): "option9" is not one of "option1", "option2" or "option3"')
            assert await text(client, tool, {}) == "Elicitation completed: action=decline"
        # The form goes out verbatim: enum, oneOf const/title, enumNames, items.enum, items.anyOf.
        assert script.asked == [form(SEP1330, "EnumsForm")] * 4
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_missing_capability(era):
    async def body():
        script = Script()
        async with connect(era, script, elicit=False, sampling=False, roots=False) as client:
            assert await protocol_error(client.call_tool("test_missing_capability", {})) == (
                -32021,
                "Client did not declare the sampling capability required by resolver 'required_sample'",
                {"requiredCapabilities": {"sampling": {}}},
            )
        assert script.asked == []
        script = Script()
        script.sample_text = "pong"
        async with connect(era, script) as client:
            assert await text(client, "test_missing_capability", {}) == "Success: pong"
        assert script.asked == [sample("Say hello", 50)]
    run(body())


# --- the MRTR fixtures (on legacy connections the same resolvers ask mid-call) ------------------


@pytest.mark.needs_mrtr
@eras
def test_input_required_elicitation(era):
    async def body():
        script = Script().accept({"name": "Alice"})
        async with connect(era, script) as client:
            assert await text(client, "test_input_required_result_elicitation", {}) == "Hello, Alice!"
        assert script.asked == [form("What is your name?", "Name")]
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_input_required_sampling_and_roots(era):
    async def body():
        script = Script()
        script.sample_text = "The capital of France is Paris."
        async with connect(era, script) as client:
            assert await text(client, "test_input_required_result_sampling", {}) == \
                "Sampling result: The capital of France is Paris."
            assert await text(client, "test_input_required_result_list_roots", {}) == \
                f"Found 1 root(s): {ROOT_URI}"
        assert script.asked == [sample("What is the capital of France?", 100), ("roots",)]
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_input_required_request_state_and_tampered_state_tools(era):
    async def body():
        script = Script().accept({"ok": True}).accept({"ok": False}).accept({"ok": True})
        async with connect(era, script) as client:
            assert await text(client, "test_input_required_result_request_state", {}) == \
                "state-ok: requestState validated, ok=true"
            assert await text(client, "test_input_required_result_tampered_state", {}) == \
                "integrity-ok: state verified, ok=false"
            assert await text(client, "test_streaming_elicitation", {}) == "Streaming complete, ok=true"
        assert script.asked == [form("Please confirm", "Confirmation")] * 3
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_input_required_multiple_inputs(era):
    async def body():
        script = Script().accept({"name": "Alice"})
        script.sample_text = "Hello there!"
        async with connect(era, script) as client:
            assert await text(client, "test_input_required_result_multiple_inputs", {}) == \
                "Name: Alice; Greeting: Hello there!; Roots: 1"
        # One round on 2026-07-28 (dispatch order is the client's), three requests on legacy.
        assert sorted(script.asked, key=repr) == sorted(
            [form("What is your name?", "Name"), sample("Generate a greeting", 50), ("roots",)], key=repr)
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_input_required_multi_round(era):
    async def body():
        script = Script().accept({"name": "Alice"}).accept({"color": "blue"})
        async with connect(era, script) as client:
            assert await text(client, "test_input_required_result_multi_round", {}) == \
                "Multi-round complete for Alice who likes blue"
        assert script.asked == [form("Step 1: What is your name?", "Name"),
                                form("Step 2: What is your favorite color?", "Color")]
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_input_required_capabilities(era):
    async def body():
        script = Script().accept({"value": "v1"})
        script.sample_text = "s1"
        async with connect(era, script) as client:
            assert await text(client, "test_input_required_result_capabilities", {}) == \
                "capabilities-ok: value=v1, sample=s1"
        assert sorted(script.asked, key=repr) == sorted(
            [form("Please provide a value", "Value"), sample("Provide a sample", 50)], key=repr)

        # Sampling only (the suite's capability-check): the elicitation is not asked at all.
        script = Script()
        script.sample_text = "s2"
        async with connect(era, script, elicit=False, roots=False) as client:
            assert await text(client, "test_input_required_result_capabilities", {}) == \
                "capabilities-ok: value=default, sample=s2"
        assert script.asked == [sample("Provide a sample", 50)]

        # Elicitation only: the sampling resolver needs a capability the client lacks.
        script = Script().accept({"value": "v3"})
        async with connect(era, script, sampling=False, roots=False) as client:
            code, message, data = await protocol_error(
                client.call_tool("test_input_required_result_capabilities", {}))
        assert (code, message, data) == (
            -32021, "Client did not declare the sampling capability required by resolver 'sample_input'",
            {"requiredCapabilities": {"sampling": {}}})
    run(body())


@pytest.mark.needs_mrtr
@eras
def test_input_required_prompt(era):
    async def body():
        script = Script().accept({"context": "test context"})
        async with connect(era, script) as client:
            result = await asyncio.wait_for(client.get_prompt("test_input_required_result_prompt"), CALL_TIMEOUT)
        assert dump(result.messages) == [
            {"role": "user", "content": {"type": "text", "text": "Prompt with context: test context"}}]
        assert script.asked == [form("What context should the prompt use?", "PromptContext")]
    run(body())


@pytest.mark.needs_mrtr
@modern_only
def test_mrtr_wire_rounds(era):
    """The rounds the suite drives by hand: keys, requestState, tampering, wrong and extra keys."""

    async def body():
        script = Script()
        async with connect(era, script) as client:
            session = client.session

            async def call_raw(tool: str, responses=None, state=None):
                return await asyncio.wait_for(session.call_tool(
                    tool, {}, input_responses=responses, request_state=state, allow_input_required=True),
                    CALL_TIMEOUT)

            alice = ElicitResult(action="accept", content={"name": "Alice"})
            first = await call_raw("test_input_required_result_elicitation")
            assert isinstance(first, InputRequiredResult), first
            assert first.result_type == "input_required"
            assert list(first.input_requests) == ["user_name"]
            assert dump([first.input_requests["user_name"]]) == [{
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "What is your name?", "requestedSchema": FORMS["Name"]}}]
            assert isinstance(first.request_state, str) and first.request_state

            # The answer with the echoed state (plus keys nobody asked for) completes the call.
            done = await call_raw("test_input_required_result_elicitation",
                                  {"user_name": alice, "unknown_extra_key": ElicitResult(
                                      action="accept", content={"foo": "bar"})},
                                  first.request_state)
            assert only_text(done) == "Hello, Alice!"

            # A wrong key is no answer: the question is asked again, never an error.
            again = await call_raw("test_input_required_result_elicitation",
                                   {"wrong_key": ElicitResult(action="accept", content={"data": "wrong"})},
                                   first.request_state)
            assert isinstance(again, InputRequiredResult) and list(again.input_requests) == ["user_name"]

            # A tampered state is rejected.
            assert await protocol_error(call_raw(
                "test_input_required_result_tampered_state",
                {"confirm": ElicitResult(action="accept", content={"ok": True})},
                (await call_raw("test_input_required_result_tampered_state")).request_state + "-TAMPERED",
            )) == (-32602, "Invalid or expired requestState", {"reason": "invalid_request_state"})

            # Multi-round: every round has its own state.
            r1 = await call_raw("test_input_required_result_multi_round")
            assert isinstance(r1, InputRequiredResult) and list(r1.input_requests) == ["step1"]
            r2 = await call_raw("test_input_required_result_multi_round", {"step1": alice}, r1.request_state)
            assert isinstance(r2, InputRequiredResult) and list(r2.input_requests) == ["step2"]
            assert r2.request_state and r2.request_state != r1.request_state
            r3 = await call_raw("test_input_required_result_multi_round",
                                {"step2": ElicitResult(action="accept", content={"color": "blue"})},
                                r2.request_state)
            assert only_text(r3) == "Multi-round complete for Alice who likes blue"
        assert script.asked == []
    run(body())


# --- list-changed triggers --------------------------------------------------------------------

TOOLS_CHANGED, PROMPTS_CHANGED = "notifications/tools/list_changed", "notifications/prompts/list_changed"


@legacy_only
def test_triggers_legacy_notify_the_session(era):
    async def body():
        script = Script()
        async with connect(era, script) as client:
            # Session-wide notifications travel on the client's standalone GET stream, which the
            # client opens in the background after connecting: trigger again until one arrives.
            for tool, method in (("test_trigger_tool_change", TOOLS_CHANGED),
                                 ("test_trigger_prompt_change", PROMPTS_CHANGED)):
                for _attempt in range(10):
                    assert await text(client, tool, {}) == f"Mutation triggered: {method}"
                    with contextlib.suppress(AssertionError):
                        await eventually(lambda: any(m == method for m, _ in script.notifications), 0.5)
                        break
                else:
                    raise AssertionError(f"no {method} in {script.notifications}")
    run(body())


@modern_only
def test_triggers_modern_reach_listen_streams(era):
    async def body():
        async with connect(era) as client:
            async with client.listen(tools_list_changed=True) as sub:
                assert sub.honored.tools_list_changed
                assert await text(client, "test_trigger_tool_change", {}) == f"Mutation triggered: {TOOLS_CHANGED}"
                assert isinstance(await asyncio.wait_for(anext(sub), 5), ToolsListChanged)
            async with client.listen(prompts_list_changed=True) as sub:
                assert sub.honored.prompts_list_changed
                assert await text(client, "test_trigger_tool_change", {}) == f"Mutation triggered: {TOOLS_CHANGED}"
                assert await text(client, "test_trigger_prompt_change", {}) == \
                    f"Mutation triggered: {PROMPTS_CHANGED}"
                assert isinstance(await asyncio.wait_for(anext(sub), 5), PromptsListChanged)
            # The lists themselves do not change.
            assert [t.name for t in (await client.list_tools(cache_mode="bypass")).tools] == list(SPEC["tools"])
    run(body())


# --- resources --------------------------------------------------------------------------------


@eras
def test_read_resources(era):
    async def body():
        async with connect(era) as client:
            async def read(uri):
                return dump((await asyncio.wait_for(client.read_resource(uri), CALL_TIMEOUT)).contents)

            assert await read("test://static-text") == [{
                "uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}]
            assert await read("test://static-binary") == [{
                "uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}]
            assert await read("test://watched-resource") == [{
                "uri": "test://watched-resource", "mimeType": "text/plain", "text": "Watched resource content"}]
            for id_ in ("123", "abc"):
                [contents] = await read(f"test://template/{id_}/data")
                assert {k: v for k, v in contents.items() if k != "text"} == \
                    {"uri": f"test://template/{id_}/data", "mimeType": "application/json"}
                # The suite's reference document (key order aside: it is compact JSON text).
                assert json.loads(contents["text"]) == {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}
                assert " " not in contents["text"].replace("Data for ID: ", "")
    run(body())


@eras
def test_read_unknown_resource(era):
    async def body():
        uri = "test://nonexistent-resource-for-conformance-testing"
        async with connect(era) as client:
            code, message, data = await protocol_error(client.read_resource(uri))
        if era == LEGACY:
            assert (code, message, data) == (-32002, "Resource not found", {"uri": uri})
        else:
            assert (code, data) == (-32602, {"uri": uri})
    run(body())


@legacy_only
def test_subscribe_and_unsubscribe(era):
    async def body():
        async with connect(era) as client:
            await asyncio.wait_for(client.subscribe_resource("test://watched-resource"), CALL_TIMEOUT)
            await asyncio.wait_for(client.unsubscribe_resource("test://watched-resource"), CALL_TIMEOUT)
    run(body())


# --- prompts and completion -------------------------------------------------------------------


@eras
def test_get_prompts(era):
    async def body():
        async with connect(era) as client:
            async def get(name, arguments=None):
                result = await asyncio.wait_for(client.get_prompt(name, arguments), CALL_TIMEOUT)
                return dump(result.messages)

            assert await get("test_simple_prompt") == [
                {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]
            assert await get("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"}) == [
                {"role": "user", "content": {"type": "text",
                                             "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]
            assert await get("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}) == [
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": "test://example-resource", "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
            ]
            assert await get("test_prompt_with_image") == [
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
            ]
    run(body())


@eras
def test_completion(era):
    async def body():
        async with connect(era) as client:
            async def values(ref, name, value):
                result = await asyncio.wait_for(client.complete(ref, {"name": name, "value": value}), CALL_TIMEOUT)
                return result.completion.values

            prompt = PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
            assert await values(prompt, "arg1", "par") == ["paris", "park", "party"]
            assert await values(prompt, "arg1", "test") == ["test", "testValue1"]  # what the suite sends
            assert await values(prompt, "arg1", "") == ["paris", "park", "party", "test", "testValue1"]
            assert await values(prompt, "arg1", "zzz") == []
            assert await values(prompt, "arg2", "w") == ["world"]
            template = ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data")
            assert await values(template, "id", "4") == ["456"]
            assert await values(template, "id", "") == ["123", "456"]
    run(body())
