"""More than one replica (issue 22), with real parts: three replicas of the fleet example behind
real nginx with real Redis as the notification bus, deployed by the README section's own blocks
(`fleet.py`), driven by the Python SDK client (mcp==2.3.0) in both eras.

1. Legacy sessions through nginx: six sessions, each signing ten notes (two elicitations per
   call: 32 POSTs per session) reach the replica their id names, every request of them.
2. The bus: a `resources/updated` caused on r1 reaches a 2026-07-28 listener on r2 and a legacy
   subscriber on r3, once each and in order; r1's own listener gets it once (local delivery, the
   copy back from Redis skipped); `resources/list_changed` from r2 reaches a listener on r3 and
   not a listener that asked only for resources.
3. Redis lost and back: r1 still tells its own listener, r2 misses the change, every replica
   logs the loss and the reconnection (with the count of changes not published), then changes
   cross again.
4. Killing r2 mid-run: the legacy sessions on r1 and r3 and the 2026-07-28 calls through nginx
   complete; r2's sessions get 404 from a backup (`Session terminated`), never a 502 or a hang.
5. Key rotation under load, the README's three steps: no call fails, tokens carry the old key
   id before and the new one after; a replica promoted without the first step makes calls fail
   with -32602 (the negative control).

One fleet for the module, tests in this order; each leaves the fleet whole.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import signal
import time
import uuid

import pytest
from conftest import LEGACY, MODERN, PROTOCOL
from fleet import REPLICAS, Fleet, wait_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult, TextContent

CALL_TIMEOUT = 10.0
NOTES = ["notes://1", "notes://2"]


def run(coro, timeout: float = 60) -> None:
    """Runs a test body; a failure inside the SDK's task groups is raised as itself (its first
    leaf), not as nested exception groups."""
    try:
        asyncio.run(asyncio.wait_for(coro, timeout))
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from group


@pytest.fixture(scope="module")
def fleet():
    f = Fleet()
    try:
        f.start()
        yield f
    finally:
        f.close()


# --- the client side --------------------------------------------------------------------------


class Signer:
    """Answers sign_note's questions (the name, then yes) and records them."""

    def __init__(self, name: str):
        self.name = name
        self.asked: list[str] = []

    async def on_elicit(self, ctx, params):
        self.asked.append(params.message)
        if "name" in params.requested_schema.get("properties", {}):
            return ElicitResult(action="accept", content={"name": self.name})
        return ElicitResult(action="accept", content={"confirm": True})

    def expected(self, notes: list[str]) -> list[str]:
        return [q for n in notes for q in (f"Who signs note '{n}'?", f"Sign note '{n}' as {self.name}?")]


class Recorder:
    """The change notifications a client received, in order."""

    def __init__(self):
        self.updated: list[str] = []
        self.list_changed = 0

    async def on_message(self, message):
        method = getattr(message, "method", None)
        if method == "notifications/resources/updated":
            self.updated.append(message.params.uri)
        elif method == "notifications/resources/list_changed":
            self.list_changed += 1


@contextlib.asynccontextmanager
async def connect(url: str, era: str, *, signer: Signer | None = None, recorder: Recorder | None = None,
                  sessions: list[str] | None = None, on_request=None):
    """The Python SDK client at `url`; `sessions` collects the Mcp-Session-Id answers carry,
    `on_request(json_body)` sees every JSON request sent."""
    http = create_mcp_http_client()
    hooks: dict = {"request": [], "response": []}
    if sessions is not None:
        async def on_response(response):
            sid = response.headers.get("mcp-session-id")
            if sid and sid not in sessions:
                sessions.append(sid)
        hooks["response"].append(on_response)
    if on_request is not None:
        async def request_hook(request):
            if request.method == "POST":
                on_request(json.loads(request.content))
        hooks["request"].append(request_hook)
    http.event_hooks = hooks
    callbacks: dict = {}
    if signer is not None:
        callbacks["elicitation_callback"] = signer.on_elicit
    if recorder is not None:
        callbacks["message_handler"] = recorder.on_message
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=era, cache=None, **callbacks) as c:
            assert c.protocol_version == PROTOCOL[era]
            yield c


async def text(client: Client, tool: str, arguments: dict) -> str:
    r = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    assert r.is_error is False, r
    assert len(r.content) == 1 and isinstance(r.content[0], TextContent), r
    assert r.structured_content == {"result": r.content[0].text}, r
    return r.content[0].text


async def sign(client: Client, note: str, name: str) -> None:
    assert await text(client, "sign_note", {"id": note}) == f"Note '{note}' signed by {name}."


async def write(client: Client, note: str, body: str) -> None:
    assert await text(client, "write_note", {"id": note, "text": body}) == \
        f"Wrote notes://{note} ({len(body)} characters)."


async def eventually(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        await asyncio.sleep(0.02)


def replica_of(session_id: str) -> str:
    name, _, rest = session_id.partition(".")
    assert name in REPLICAS and str(uuid.UUID(rest)) == rest, session_id
    return name


# --- 1. legacy sessions through nginx ---------------------------------------------------------


def test_legacy_sessions_through_nginx_reach_their_replica(fleet: Fleet):
    async def body():
        sessions: list[list[str]] = [[] for _ in range(6)]
        sent: list[list[str]] = [[] for _ in range(6)]
        signers = [Signer(f"signer-{i}") for i in range(6)]
        notes = [[f"n{i}-{k}" for k in range(10)] for i in range(6)]
        async with contextlib.AsyncExitStack() as stack:
            # One after the other: each initialize goes to the next replica.
            clients = [await stack.enter_async_context(
                connect(fleet.url(), LEGACY, signer=signers[i], sessions=sessions[i],
                        on_request=lambda m, i=i: sent[i].append(m.get("method", "(answer)"))))
                for i in range(6)]

            async def session(i: int) -> None:
                for note in notes[i]:
                    await sign(clients[i], note, signers[i].name)

            await asyncio.gather(*(session(i) for i in range(6)))
        # What the SDK sends: the handshake, then each call and its two answers (and the tool
        # list it reads after the first call, for the output schema).
        call = ["tools/call", "(answer)", "(answer)"]
        for i in range(6):
            assert sent[i] == ["initialize", "notifications/initialized", *call, "tools/list", *call * 9], sent[i]
            assert signers[i].asked == signers[i].expected(notes[i])
            assert len(sessions[i]) == 1, sessions[i]
        ids = [s[0] for s in sessions]
        assert sorted(replica_of(sid) for sid in ids) == ["r1", "r1", "r2", "r2", "r3", "r3"], ids

        # nginx's access log: every request of a session went to the replica its id names. (nginx
        # logs a request when its answer ends: the GET streams end with the DELETE.)
        def of(sid):
            return [e for e in fleet.access() if e.session == sid]

        await eventually(lambda: all(
            [e.method for e in of(sid)].count("DELETE") == 1 and "GET" in [e.method for e in of(sid)]
            for sid in ids), 5, "the sessions' GET and DELETE in the access log")
        for sid in ids:
            entries = of(sid)
            port = f"127.0.0.1:{fleet.ports[replica_of(sid)]}"
            assert all(e.upstreams == [port] for e in entries), (sid, entries)
            methods = [e.method for e in entries]
            # All but the initialize (which has no id yet); one DELETE; the GET stream.
            assert methods.count("POST") == 32, (sid, entries)
            assert methods.count("DELETE") == 1, (sid, entries)
            assert all(e.status in (200, 202) for e in entries if e.method == "POST"), (sid, entries)
            assert [e.status for e in entries if e.method == "DELETE"] == [204], (sid, entries)
    run(body())


# --- 2. the bus -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # the legacy subscriber's
def test_changes_reach_every_replica_once_in_order(fleet: Fleet):
    async def body():
        on_r1, on_r2, on_r3 = Recorder(), Recorder(), Recorder()
        catalog_r3 = Recorder()
        async with contextlib.AsyncExitStack() as stack:
            enter = stack.enter_async_context
            listener_r1 = await enter(connect(fleet.url("r1"), MODERN, recorder=on_r1))
            listener_r2 = await enter(connect(fleet.url("r2"), MODERN, recorder=on_r2))
            for listener in (listener_r1, listener_r2):
                sub = await enter(listener.listen(resource_subscriptions=NOTES))
                assert sub.honored.resource_subscriptions == NOTES
            legacy_r3 = await enter(connect(fleet.url("r3"), LEGACY, recorder=on_r3))
            for uri in NOTES:
                await asyncio.wait_for(legacy_r3.subscribe_resource(uri), CALL_TIMEOUT)
            catalog = await enter(connect(fleet.url("r3"), MODERN, recorder=catalog_r3))
            sub = await enter(catalog.listen(resources_list_changed=True))
            assert sub.honored.resources_list_changed is True
            writer_r1 = await enter(connect(fleet.url("r1"), MODERN))
            writer_r2 = await enter(connect(fleet.url("r2"), MODERN))

            # Warm-up: the legacy client's GET stream opens after its initialize (what is sent
            # before it exists is lost, as with one replica).
            deadline = time.monotonic() + 5
            n = 0
            while not (on_r2.updated and on_r3.updated):
                assert time.monotonic() < deadline, (on_r1.updated, on_r2.updated, on_r3.updated)
                await write(writer_r1, "1", f"warm-up {n}")
                n += 1
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)
            # The listeners were acknowledged before the first write: they got every one.
            assert on_r1.updated == on_r2.updated == ["notes://1"] * n
            assert 1 <= len(on_r3.updated) <= n and set(on_r3.updated) == {"notes://1"}, on_r3.updated
            for recorder in (on_r1, on_r2, on_r3):
                recorder.updated.clear()

            expected = []
            for k in range(20):
                note = "1" if k % 2 == 0 else "2"
                await write(writer_r1, note, f"text number {k}")
                expected.append(f"notes://{note}")
            await eventually(lambda: min(len(r.updated) for r in (on_r1, on_r2, on_r3)) >= 20, 5,
                             "twenty updates on each replica")
            await asyncio.sleep(1)  # and no more
            assert on_r1.updated == expected  # r1's own listener: once, not again from Redis
            assert on_r2.updated == expected  # a 2026-07-28 listener on r2
            assert on_r3.updated == expected  # a legacy subscriber on r3

            assert await text(writer_r2, "touch_catalog", {}) == "The resource list changed."
            await eventually(lambda: catalog_r3.list_changed >= 1 and on_r3.list_changed >= 1, 5,
                             "resources/list_changed on r3")
            await asyncio.sleep(1)
            assert catalog_r3.list_changed == 1
            assert on_r3.list_changed == 1  # the legacy session on r3 gets it too (no filter)
            assert on_r1.list_changed == on_r2.list_changed == 0  # listeners that did not ask for it
            assert catalog_r3.updated == []
    run(body())


# --- 3. Redis lost and back -------------------------------------------------------------------


def test_a_replica_that_loses_redis_serves_its_own_clients_and_reconnects(fleet: Fleet):
    async def body():
        port = fleet.redis_port
        lost = f"bus: lost Redis at 127.0.0.1:{port}: "
        back = re.compile(rf"bus: reconnected to Redis at 127\.0\.0\.1:{port} after \d+(\.\d+)? s; "
                          r"(\d+) changes were not published meanwhile")
        before = {r: fleet.count(r, lost) for r in REPLICAS}
        back_before = {r: len(back.findall(fleet.log(r))) for r in REPLICAS}
        on_r1, on_r2 = Recorder(), Recorder()
        async with contextlib.AsyncExitStack() as stack:
            enter = stack.enter_async_context
            for url, recorder in ((fleet.url("r1"), on_r1), (fleet.url("r2"), on_r2)):
                listener = await enter(connect(url, MODERN, recorder=recorder))
                await enter(listener.listen(resource_subscriptions=["notes://3"]))
            writer = await enter(connect(fleet.url("r1"), MODERN))
            await write(writer, "3", "before")
            await eventually(lambda: on_r1.updated == on_r2.updated == ["notes://3"], 5, "the first change")

            fleet.stop_redis()
            await eventually(lambda: all(fleet.count(r, lost) == before[r] + 1 for r in REPLICAS), 10,
                             "every replica logging the loss")
            for r in REPLICAS:
                line = next(l for l in reversed(fleet.log(r).splitlines()) if lost in l)
                assert line.endswith("; this replica's changes still reach its own clients, other replicas' "
                                     "changes are missed until it is back"), line
                assert " WARN " in line, line
            await write(writer, "3", "while Redis is down")
            await eventually(lambda: len(on_r1.updated) == 2, 5, "r1's own change on r1")
            await asyncio.sleep(1)
            assert on_r1.updated == ["notes://3", "notes://3"]
            assert on_r2.updated == ["notes://3"]  # missed: Pub/Sub keeps nothing

            fleet.start_redis()
            await eventually(lambda: all(len(back.findall(fleet.log(r))) == back_before[r] + 1
                                         for r in REPLICAS), 10, "every replica reconnecting")
            not_published = {r: int(back.findall(fleet.log(r))[-1][1]) for r in REPLICAS}
            assert not_published == {"r1": 1, "r2": 0, "r3": 0}
            await write(writer, "3", "after")
            await eventually(lambda: len(on_r2.updated) == 2, 5, "the change after the reconnection on r2")
            await asyncio.sleep(0.5)
            assert on_r1.updated == ["notes://3"] * 3
            assert on_r2.updated == ["notes://3"] * 2
    run(body())


# --- 4. killing a replica ---------------------------------------------------------------------


def test_killing_a_replica_loses_no_call_of_the_others(fleet: Fleet):
    async def body():
        killed = asyncio.Event()
        kill_time: list[float] = []
        async with contextlib.AsyncExitStack() as stack:
            # Two legacy sessions per replica through nginx.
            by_replica: dict[str, list[tuple[Client, Signer, list[str]]]] = {r: [] for r in REPLICAS}
            for i in range(12):
                if all(len(v) >= 2 for v in by_replica.values()):
                    break
                signer, ids = Signer(f"legacy-{i}"), []
                inner = contextlib.AsyncExitStack()
                c = await inner.enter_async_context(connect(fleet.url(), LEGACY, signer=signer, sessions=ids))
                owner = replica_of(ids[0])
                if len(by_replica[owner]) < 2:
                    by_replica[owner].append((c, signer, ids))
                    stack.push_async_exit(inner)
                else:
                    await inner.aclose()
            assert all(len(v) == 2 for v in by_replica.values()), by_replica

            progress: dict[str, int] = {}  # calls done per loop

            async def survivor(c: Client, signer: Signer, tag: str) -> int:
                done = after = 0
                while after < 3:
                    await sign(c, f"{tag}-{done}", signer.name)
                    done += 1
                    progress[tag] = done
                    after += killed.is_set()
                return done

            async def doomed(c: Client, signer: Signer, tag: str) -> tuple[int, str]:
                # Two calls, then none in flight at the kill (a legacy call in flight on a
                # replica that dies is lost with it).
                for k in range(2):
                    await sign(c, f"{tag}-{k}", signer.name)
                    progress[tag] = k + 1
                await killed.wait()
                with pytest.raises(MCPError) as e:
                    await asyncio.wait_for(c.call_tool("sign_note", {"id": f"{tag}-late"}), CALL_TIMEOUT)
                return e.value.code, e.value.message

            modern_failures: list[tuple[int, float, str]] = []

            async def modern(n: int) -> int:
                signer = Signer(f"modern-{n}")
                async with connect(fleet.url(), MODERN, signer=signer) as c:
                    done = after = 0
                    while after < 3:
                        started = time.monotonic()
                        try:
                            await sign(c, f"m{n}-{done}", signer.name)
                        except Exception as e:  # noqa: BLE001 - any failure is counted and judged below
                            assert not isinstance(e, TimeoutError), f"modern-{n}: a call hung"
                            modern_failures.append((n, started, repr(e)))
                        done += 1
                        progress[f"m{n}"] = done
                        after += bool(kill_time) and started > kill_time[0]
                    return done

            tasks = [asyncio.create_task(survivor(c, s, f"{r}-{j}"))
                     for r in ("r1", "r3") for j, (c, s, _) in enumerate(by_replica[r])]
            doomed_tasks = [asyncio.create_task(doomed(c, s, f"r2-{j}")) for j, (c, s, _) in enumerate(by_replica["r2"])]
            modern_tasks = [asyncio.create_task(modern(n)) for n in range(4)]
            # Every loop under way (the r2 sessions done with their calls), then the kill.
            await eventually(lambda: len(progress) == 10 and all(v >= 2 for v in progress.values()), 20,
                             f"every loop's first calls ({progress})")
            await asyncio.to_thread(fleet.kill, "r2")
            kill_time.append(time.monotonic())
            killed.set()
            results = await asyncio.wait_for(asyncio.gather(*tasks, *doomed_tasks, *modern_tasks), 60)
            survivors, doomed_results, modern_done = results[:4], results[4:6], results[6:]
            print(f"calls: legacy {survivors}, 2026-07-28 {modern_done}; failed in flight: {modern_failures}")
            assert all(n >= 4 for n in survivors), survivors
            # The backup's 404, as the SDK reports it on a session it had.
            assert doomed_results == [(-32600, "Session terminated")] * 2
            # Only a round in flight on r2 at the kill may fail (nginx cannot resend a POST it
            # had sent): at most one per loop, started before the kill.
            assert all(started < kill_time[0] for _, started, _ in modern_failures), modern_failures
            assert len({n for n, _, _ in modern_failures}) == len(modern_failures), modern_failures
            assert all(n >= 4 for n in modern_done), modern_done
            r2_ids = [ids[0] for _, _, ids in by_replica["r2"]]
        # r2's sessions after the kill: nginx tried r2, then a backup answered 404 (POST and DELETE).
        p2 = f"127.0.0.1:{fleet.ports['r2']}"
        await eventually(lambda: all(any(e.method == "DELETE" for e in fleet.access() if e.session == sid)
                                     for sid in r2_ids), 5, "r2's sessions' DELETE in the access log")
        for sid in r2_ids:
            late = [e for e in fleet.access() if e.session == sid and e.method in ("POST", "DELETE")
                    and e.status == 404]
            assert sorted(e.method for e in late) == ["DELETE", "POST"], (sid, fleet.access())
            for e in late:
                assert e.upstreams[0] == p2 and len(e.upstreams) == 2 and e.upstreams[1] != p2, e
        fleet.restart("r2")
    run(body())


# --- 5. key rotation --------------------------------------------------------------------------

HKDF_INFO = b"mcp/request-state/v1/aes-256-gcm"
KID_INFO = b"mcp/request-state/v1/kid:"


def kid(secret_b64: str) -> str:
    """A key's id as runtime/src/state.rs computes it: SHA-256(prefix || HKDF-SHA256(secret))[..4]."""
    secret = base64.b64decode(secret_b64.strip())
    prk = hmac.new(b"\0" * 32, secret, hashlib.sha256).digest()
    key = hmac.new(prk, HKDF_INFO + b"\x01", hashlib.sha256).digest()
    return hashlib.sha256(KID_INFO + key).digest()[:4].hex()


def token_kid(token: str) -> str:
    assert token.startswith("v1."), token
    raw = token[3:]
    return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))[:4].hex()


def test_key_rotation_under_load_fails_no_call(fleet: Fleet):
    etc = fleet.dir / "etc"
    keys_file = etc / "state-keys"

    def loaded(replica: str, seals: str, opens: str | None = None) -> int:
        count = 2 if opens else 1
        tail = f"; also opens {opens})" if opens else ")"
        return fleet.count(replica, f"requestState: {count} key(s) from {keys_file} (seals with kid {seals}{tail}")

    def wait_loaded(seals: str, opens: str | None, replicas=REPLICAS) -> None:
        wait_for(lambda: all(loaded(r, seals, opens) >= 1 for r in replicas), 10,
                 f"seals with {seals}, opens {opens} on {replicas}")

    async def body():
        k1 = kid(keys_file.read_text())
        for r in REPLICAS:
            assert loaded(r, k1) >= 1, fleet.log(r)
        phase = ["k1"]
        tokens: list[tuple[str, str]] = []
        failures: list[str] = []
        calls: dict[str, int] = {}
        stop = asyncio.Event()

        def on_request(message: dict) -> None:
            state = (message.get("params") or {}).get("requestState")
            if state is not None:
                tokens.append((phase[0], token_kid(state)))

        async def loop(n: int) -> None:
            signer = Signer(f"rotating-{n}")
            async with connect(fleet.url(), MODERN, signer=signer, on_request=on_request) as c:
                k = 0
                while not stop.is_set():
                    try:
                        await sign(c, f"k{n}-{k}", signer.name)
                        calls[phase[0]] = calls.get(phase[0], 0) + 1
                    except Exception as e:  # noqa: BLE001 - every failure is reported
                        failures.append(f"{phase[0]}: {e!r}")
                    k += 1

        async def calls_in(label: str, n: int) -> None:
            await eventually(lambda: calls.get(label, 0) >= n, 20, f"{n} calls in phase {label}")

        loops = [asyncio.create_task(loop(n)) for n in range(4)]
        await calls_in("k1", 8)
        await asyncio.to_thread(fleet.sh, fleet.add_key)
        k2_text = (etc / "k2").read_text()
        k2 = kid(k2_text)
        await asyncio.to_thread(wait_loaded, k1, k2)
        phase[0] = "added"
        await calls_in("added", 8)
        phase[0] = "promoting"
        await asyncio.to_thread(fleet.sh, fleet.promote_key)
        await asyncio.to_thread(wait_loaded, k2, k1)
        phase[0] = "promoted"
        await calls_in("promoted", 8)
        phase[0] = "retiring"
        await asyncio.to_thread(fleet.sh, fleet.retire_key)  # sleeps out the lifetime first
        await asyncio.to_thread(wait_loaded, k2, None)
        phase[0] = "retired"
        await calls_in("retired", 8)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*loops), 30)

        assert failures == []
        assert keys_file.read_text() == k2_text
        seen = {p: sorted({k for q, k in tokens if q == p}) for p in ("k1", "added", "promoted", "retired")}
        print(f"keys {k1} -> {k2}; calls per phase {calls}; key ids per phase {seen}; {len(tokens)} tokens")
        assert seen["k1"] == [k1] and seen["added"] == [k1], seen
        assert seen["retired"] == [k2], seen
        assert k2 in {k for q, k in tokens if q in ("promoting", "promoted")}, seen
        assert sorted(p.name for p in etc.iterdir()) == ["state-keys"]

        # The negative control: r1 seals with a key the others cannot open (no first step).
        k3_secret = base64.b64encode(b"k3-" + bytes(range(29))).decode()
        keys_file.write_text(f"{k3_secret}\n{keys_file.read_text()}")
        k3 = kid(k3_secret)
        os.kill(fleet.pid("r1"), signal.SIGHUP)
        await asyncio.to_thread(wait_loaded, k3, k2, ("r1",))
        rejected = "rejected requestState: token sealed with an unknown key"
        before = sum(fleet.count(r, rejected) for r in ("r2", "r3"))
        signer = Signer("control")
        errors = []
        async with connect(fleet.url(), MODERN, signer=signer) as c:
            for k in range(30):
                try:
                    await sign(c, f"control-{k}", "control")
                except MCPError as e:
                    errors.append((e.code, e.message, e.data))
                    break
        assert errors == [(-32602, "Invalid or expired requestState", {"reason": "invalid_request_state"})]
        assert sum(fleet.count(r, rejected) for r in ("r2", "r3")) == before + 1
        # Every replica on k3,k2 again: the fleet is whole.
        for r in ("r2", "r3"):
            os.kill(fleet.pid(r), signal.SIGHUP)
        await asyncio.to_thread(wait_loaded, k3, k2)
    run(body(), 90)
