"""The lending example (generated-examples/lending: a spec with `auth`, per-operation scopes and a
"principal" resolver) as an OAuth 2.1 resource server of the suite's real authorization server
(peers/authz/start.sh: oidc-provider issuing RS256 at+jwt access tokens for
http://127.0.0.1:P/mcp), through the Python SDK client (mcp==2.3.0) and its
`ClientCredentialsOAuthProvider` under httpx2, in both eras:

* from the first 401 through protected-resource and authorization-server metadata discovery to a
  client-credentials token and successful calls, both token-endpoint authentication methods
  (mcp-machine: client_secret_basic, mcp-machine-post: client_secret_post); the 403
  insufficient_scope on borrow_book (loans:write) steps the token up and the call succeeds;
* mcp-narrow, whose client may not have loans:write, gets the exact 403 challenge and the step-up
  fails at the authorization server (invalid_scope): the pending call is cancelled and the
  client's transport ends with the SDK's OAuthTokenError; nothing was asked or borrowed;
* the principal reaches the resolver: each client's loans are its own.

One authorization server for the module; one lending server per test, on the port the
authorization server's resource names. The binary is `$MCPGEN_PEERS_BIN_DIR/lending` or a
`cargo build -p lending`. peers/tests/node/lending.test.mjs has the exact negative cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx2
import pytest
from conftest import LEGACY, MODERN, PROTOCOL, ROOT, Script, free_port, run
from mcp import Client
from mcp.client.auth.exceptions import OAuthTokenError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client

AUTHZ = ROOT / "peers" / "authz"
CLIENTS = {c["client_id"]: c for c in json.loads((AUTHZ / "authz.json").read_text())["clients"]}
SPEC = json.loads((ROOT / "generated-examples/lending/spec.json").read_text())
CALL_TIMEOUT = 20.0
DUNE = "lib-1: 'Dune' by Frank Herbert (2 of 2 on the shelf)"

eras = pytest.mark.parametrize("era", [pytest.param(LEGACY, id="http-legacy"),
                                       pytest.param(MODERN, id="http-2026-07-28")])

_binary: list[Path] = []


def lending_binary() -> Path:
    if not _binary:
        bin_dir = os.environ.get("MCPGEN_PEERS_BIN_DIR")
        if bin_dir:
            _binary.append(Path(bin_dir) / "lending")
        else:
            out = subprocess.run(
                ["cargo", "build", "--manifest-path", str(ROOT / "generated-examples/Cargo.toml"),
                 "-p", "lending", "--message-format=json"],
                check=True, stdout=subprocess.PIPE, text=True,
            ).stdout
            for line in out.splitlines():
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "lending":
                    _binary.append(Path(msg["executable"]))
    assert _binary and _binary[0].is_file(), f"no lending binary {_binary}"
    return _binary[0]


class Authz:
    """The authorization server for one resource URI."""

    def __init__(self, port: int):
        self.port = port
        self.resource = f"http://127.0.0.1:{port}/mcp"
        self.prm = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        self._dir = tempfile.TemporaryDirectory(prefix="mcpgen-lending-authz-")
        # --exit-with-stdin: it also stops when this process goes away
        self.proc = subprocess.Popen(
            [str(AUTHZ / "start.sh"), "0", self.resource, "--key-out", str(Path(self._dir.name) / "key.json"),
             "--exit-with-stdin"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self.issuer = self.proc.stdout.readline().strip()
        assert self.issuer.startswith("http://127.0.0.1:"), f"authz did not start: {self.issuer!r}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._dir.cleanup()


@pytest.fixture(scope="module")
def authz():
    server = Authz(free_port())
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def lending(authz: Authz):
    """Starts the lending server on the resource's port, verifying tokens of `authz`."""
    proc = subprocess.Popen(
        [str(lending_binary()), "--transport", "http", "--bind", f"127.0.0.1:{authz.port}", "--log-level", "error",
         "--auth-issuer", authz.issuer, "--auth-resource", authz.resource],
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", authz.port)) == 0:
                    break
            time.sleep(0.02)
        else:
            raise AssertionError(f"lending did not start on port {authz.port}")
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Memory:
    """In-memory token storage for the provider."""

    def __init__(self):
        self.tokens = None
        self.info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.info

    async def set_client_info(self, info):
        self.info = info


@contextlib.asynccontextmanager
async def connect(authz: Authz, era: str, client_id: str, script: Script, seen: list):
    """The Python client with a client-credentials provider for `client_id`; `seen` records every
    HTTP exchange as (method, where, status[, www-authenticate]), `where` = "AS/path" for the
    authorization server."""
    client = CLIENTS[client_id]
    provider = ClientCredentialsOAuthProvider(
        server_url=authz.resource, storage=Memory(), client_id=client_id, client_secret=client["client_secret"],
        token_endpoint_auth_method=client["token_endpoint_auth_method"], issuer=authz.issuer,
    )

    async def record(response: httpx2.Response) -> None:
        url = response.request.url
        origin = f"{url.scheme}://{url.host}:{url.port}"
        where = f"AS{url.path}" if origin == authz.issuer else url.path
        entry = [response.request.method, where, response.status_code]
        if "www-authenticate" in response.headers:
            entry.append(response.headers["www-authenticate"])
        seen.append(entry)

    http = httpx2.AsyncClient(auth=provider, event_hooks={"response": [record]},
                              timeout=httpx2.Timeout(30, read=300))
    async with http:
        async with Client(streamable_http_client(authz.resource, http_client=http), mode=era, cache=None,
                          elicitation_callback=script.on_elicit) as session:
            assert session.protocol_version == PROTOCOL[era]
            yield session, provider


async def call_text(session: Client, tool: str, arguments: dict) -> str:
    r = await asyncio.wait_for(session.call_tool(tool, arguments), CALL_TIMEOUT)
    assert r.is_error is False, r
    assert r.structured_content == {"result": r.content[0].text}, r
    return r.content[0].text


def no_token(authz: Authz, scope: str) -> str:
    return f'Bearer resource_metadata="{authz.prm}", scope="{scope}"'


def insufficient(authz: Authz, scope: str) -> str:
    return (f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{authz.prm}", '
            f'error_description="Required scope: {scope}"')


def question(member: str) -> tuple:
    return ("form", f"Borrow 'Dune' by Frank Herbert as {member}? It is due back in 21 days.",
            SPEC["$defs"]["BorrowConfirmation"])


@eras
@pytest.mark.parametrize("client_id", ["mcp-machine", "mcp-machine-post"])
def test_client_credentials_from_the_first_401_to_calls_with_step_up(authz, era, client_id):
    async def go():
        seen: list = []
        script = Script().accept({"confirm": True})
        with lending(authz):
            async with connect(authz, era, client_id, script, seen) as (session, provider):
                assert await call_text(session, "search_catalog", {"query": "dune"}) == DUNE
                assert await call_text(session, "borrow_book", {"book_id": "lib-1"}) == (
                    f"{client_id} borrowed 'Dune' (lib-1); due back in 21 days. 1 of 2 copies on the shelf.")
                assert await call_text(session, "my_loans", {}) == f"{client_id} has 1 loan: lib-1 Dune."
                scope = provider.context.current_tokens.scope
        assert script.asked == [question(client_id)]
        assert script.unscripted == 0
        assert sorted(scope.split()) == ["catalog:read", "loans:read", "loans:write"]
        # Every exchange in order (the legacy client's GET stream left out: its timing is its own).
        # The first request has no token: the exact 401, then discovery and a token. Each 403
        # steps up with the metadata already discovered: a token request, then the request again.
        ok, accepted = ["POST", "/mcp", 200], ["POST", "/mcp", 202]
        token = ["POST", "AS/token", 200]

        def step_up(scope):
            return [["POST", "/mcp", 403, insufficient(authz, scope)], token]

        first = [["POST", "/mcp", 401, no_token(authz, "catalog:read")],
                 ["GET", "/.well-known/oauth-protected-resource/mcp", 200],
                 ["GET", "AS/.well-known/oauth-authorization-server", 200], token]
        if era == LEGACY:
            # initialize (the 401), initialized, search, tools/list (the client then checks the
            # structured output against it); borrow (its elicitation on the POST's stream, the
            # answer POSTed back); my_loans; DELETE at the end of the session
            rest = [ok, accepted, ok, ok, *step_up("catalog:read loans:write"), ok, accepted,
                    *step_up("catalog:read loans:read"), ok, ["DELETE", "/mcp", 204]]
        else:
            # search (the 401), tools/list; borrow (input_required, then the retry with
            # requestState); my_loans
            rest = [ok, ok, *step_up("catalog:read loans:write"), ok, ok, *step_up("catalog:read loans:read"), ok]
        assert [e for e in seen if e[:2] != ["GET", "/mcp"]] == first + rest

    run(go())


@eras
def test_a_narrow_client_gets_the_challenge_and_cannot_step_up(authz, era):
    async def go():
        seen: list = []
        script = Script().accept({"confirm": True})
        outcome: list = []
        # The refused step-up (OAuthTokenError inside the transport's HTTP auth flow) ends the
        # client's transport: it comes out of the client's context as an exception group.
        with pytest.raises(BaseExceptionGroup) as caught:
            with lending(authz):
                async with connect(authz, era, "mcp-narrow", script, seen) as (session, _provider):
                    assert await call_text(session, "search_catalog", {"query": "dune"}) == DUNE
                    try:
                        await asyncio.wait_for(session.call_tool("borrow_book", {"book_id": "lib-1"}), CALL_TIMEOUT)
                    except BaseException as e:  # recorded, and re-raised: the transport's cancellation
                        outcome.append(type(e).__name__)
                        raise
                    outcome.append("returned")
        # the pending call is cancelled with the transport
        assert outcome == ["CancelledError"]
        assert caught.group_contains(OAuthTokenError, match=r'^Token exchange failed \(400\): \{"error":"invalid_scope",')
        assert script.asked == []
        assert [e for e in seen if e[2] == 403] == [
            ["POST", "/mcp", 403, insufficient(authz, "catalog:read loans:write")]]
        # the first token (catalog:read), then the step-up the authorization server refuses
        assert [e[2] for e in seen if e[1] == "AS/token"] == [200, 400]

    run(go())
