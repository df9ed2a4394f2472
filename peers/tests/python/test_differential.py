"""The differential test (issue 16, item 7): the generated server against an independent validator.

For every schema of the corpus (`peers/tests/differential_corpus.json`, one tool per JSON Schema
keyword case, served by `generated-examples/differential`, whose tools answer the typed arguments
they received as JSON text), a deterministic set of argument objects, valid and invalid, is sent
with `tools/call` over stdio (raw JSON-RPC 2.0, legacy handshake), and the server's verdict is
compared with the oracle's: the Python `jsonschema` package, Draft 2020-12, with every format
checked (`jsonschema[format]`'s checkers; email-validator for `email` / `idn-email`, for which
jsonschema itself only looks for an "@"; RFC 4122's form for `uuid`, which jsonschema reads through
`int(hex, 16)`).

Agreement means, for each instance:
- the oracle accepts it -> a normal result (`isError` false, `structuredContent` {"result": text})
  whose text, parsed, equals the instance: what reached the handler is what was sent, modulo the
  normalisations listed under `same` (numbers compare by value as in JSON Schema, so `1.0` and `1`
  are the same integer; a `date-time` keeps its instant and offset, `Z` may read `+00:00`; a
  `uuid` may change case and an `ipv6` its spelling; a `default` is filled in for an absent
  property; an optional property sent as `null` or `[]` may arrive absent, as an `Option` or a
  defaulted `Vec` holds both alike; a property that no keyword of an object schema with
  `properties` mentions may be dropped, as a struct ignores unknown fields);
- the oracle rejects it -> an `isError` result, no `structuredContent`, one text block
  `Error executing tool <name>: ...` that names the JSON pointer of every violation the oracle
  reports (`(root)` for the arguments object itself, as `runtime/src/catalog/schema.rs` writes
  it), and, at every pointer both name, the same keywords (`<pointer> (<keyword>): ...`;
  `server_keyword` lists where the two validators name or locate a violation differently);
- and the oracle gives the same verdict on the advertised `inputSchema` (from `tools/list`) as
  on the corpus schema, and the advertised schema is a valid 2020-12 schema.
Every disagreement is listed with the schema, the instance and both verdicts; none is expected.

Instances: each tool's seeds (`x-values`: values of the wrapped `value` property; `x-examples`:
whole argument objects), the seeds with every integer written as a float (`1` -> `1.0`), then
seeded mutations of those (type swaps, numbers moved by one or a half, strings grown, shrunk or
given non-ASCII characters, array items dropped, duplicated or added, object keys dropped, added
or nulled) until `INSTANCES` distinct ones; `random.Random` with a fixed seed per tool, so every
run sends the same instances. The oracle decides which are valid; each tool must end up with at
least `MIN_EACH` valid and `MIN_EACH` invalid instances.
(hypothesis-jsonschema 0.23.1 was tried for the valid instances: it does not know `prefixItems`,
`minContains`, `dependentRequired`, recursive `$ref`s, and fails on the current hypothesis.)

Formats: the seeds are values on which RFCs, jsonschema and the Rust `jsonschema` crate agree.
Left out as genuinely ambiguous: an upper-case A-label prefix (`XN--BCHER-KVA.EXAMPLE`: DNS
compares case-insensitively, IDNA2008 writes A-labels in lower case; fqdn accepts it, the Rust
crate does not), leap seconds (`23:59:60`, Python's datetime cannot hold them),
IPv6 zone ids (`fe80::1%eth0`, accepted by Python's ipaddress, outside RFC 4291's text form),
ISO 8601 durations outside RFC 3339's grammar (`P1.5D`, `P1W2D`); in `pattern`, `\\p{..}`
classes (Python's `re` has none; the corpus uses explicit non-ASCII ranges instead) and a string
ending in a newline before `$` (Python's `re` lets `$` match there, ECMA-262 does not).
"""

from __future__ import annotations

import copy
import ipaddress
import json
import queue
import random
import re
import subprocess
import tempfile
import threading
import uuid
from datetime import datetime
from typing import Any

import pytest
from email_validator import EmailNotValidError, validate_email
from jsonschema import Draft202012Validator, FormatChecker

from conftest import ROOT, binary

CORPUS_PATH = ROOT / "peers/tests/differential_corpus.json"
CRATE_SPEC_PATH = ROOT / "generated-examples/differential/spec.json"
CORPUS = json.loads(CORPUS_PATH.read_text())
CRATE_SPEC = json.loads(CRATE_SPEC_PATH.read_text())
DEFS = CORPUS["$defs"]
SEED = 20261201
INSTANCES = 100
MIN_EACH = 2
CALL_TIMEOUT = 20.0
FORMATS = ["email", "idn-email", "uri", "uri-reference", "uuid", "date", "time", "date-time",
           "duration", "ipv4", "ipv6", "hostname", "regex"]


# --- the oracle ---------------------------------------------------------------------------------

UUID_FORM = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _checker() -> FormatChecker:
    checker = copy.deepcopy(Draft202012Validator.FORMAT_CHECKER)

    def email_check(smtputf8: bool):
        """RFC 5321 addresses (`email`: ASCII only) or RFC 6531 ones (`idn-email`), as syntax:
        no DNS, and single-label or special-use domains allowed (email-validator's policy refuses
        them by default)."""
        def check(instance: object) -> bool:
            if not isinstance(instance, str):
                return True
            if not smtputf8 and not instance.isascii():
                return False  # email-validator takes a U-label domain even without SMTPUTF8
            try:
                validate_email(instance, check_deliverability=False, allow_smtputf8=smtputf8,
                               allow_quoted_local=True, allow_domain_literal=True,
                               globally_deliverable=False)
            except EmailNotValidError:
                return False
            return True
        return check

    @checker.checks("uuid")
    def uuid_check(instance: object) -> bool:
        """RFC 4122's string form. jsonschema's check goes through `uuid.UUID`, whose `int(hex, 16)`
        takes a trailing space or `_` between digits (`...-73b441d1638 `)."""
        return not isinstance(instance, str) or re.fullmatch(UUID_FORM, instance) is not None

    checker.checks("email")(email_check(False))
    checker.checks("idn-email")(email_check(True))
    return checker


FORMAT_CHECKER = _checker()


def test_oracle_checks_every_claimed_format():
    """Without a format's optional dependency jsonschema silently accepts everything."""
    assert set(FORMATS) <= set(FORMAT_CHECKER.checkers), sorted(set(FORMATS) - set(FORMAT_CHECKER.checkers))
    for fmt in FORMATS:
        assert not FORMAT_CHECKER.conforms("(" if fmt == "regex" else "not a value of any format ::", fmt), fmt


def standalone(schema: dict) -> dict:
    """The tool's input schema as one document: the corpus's `$defs` at its root."""
    return {**schema, "$defs": DEFS}


def oracle(schema: dict) -> Draft202012Validator:
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FORMAT_CHECKER)


def pointer(path) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "".join("/" + p for p in parts) if parts else "(root)"


def server_keyword(error) -> str | None:
    """The keyword the server (the Rust `jsonschema` crate) names for an oracle error at the same
    pointer, or None where the two locate the violation differently. The two name keywords alike
    except: a `false` subschema (no keyword in Python) is `falseSchema`; `dependentRequired` is
    reported as `required`, `minContains` / `maxContains` as `contains`; a property name that
    fails `propertyNames` is reported as `propertyNames` at the object (Python names the keyword
    inside it); `items: false` after `prefixItems` is located at the extra item (as
    `falseSchema`), not at the array."""
    keyword = error.validator
    if keyword is None:
        return "falseSchema"
    if "propertyNames" in error.absolute_schema_path:
        return "propertyNames"
    if keyword == "items" and error.validator_value is False:
        return None
    return {"dependentRequired": "required", "minContains": "contains", "maxContains": "contains"}.get(keyword, keyword)


def named_errors(error):
    """The errors the server names for `error`: an `anyOf`/`oneOf` none of whose branches takes
    the value, but whose type only one branch admits (no `type` error of that branch at the
    value itself), is named by that branch's own errors, recursively (docs/spec.md, "What decides
    acceptance"); any other error is itself."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list] = {}
        for inner in error.context:
            branches.setdefault(inner.relative_schema_path[0], []).append(inner)
        typed = [errors for errors in branches.values()
                 if not any(e.validator == "type" and not e.relative_path for e in errors)]
        if len(typed) == 1:
            return [named for inner in typed[0] for named in named_errors(inner)]
    return [error]


def violations(validator: Draft202012Validator, instance: Any) -> list[tuple[str, str, str, str | None]]:
    """(pointer, keyword, message, the keyword the server names) of each error the oracle reports
    (as the server names it: `named_errors`)."""
    return sorted({(pointer(e.absolute_path), str(e.validator), e.message, server_keyword(e))
                   for top in validator.iter_errors(instance) for e in named_errors(top)},
                  key=lambda v: (v[0], v[1], v[2]))


# `<pointer> (<keyword>): <message>`, one violation per line of the server's text (a message may
# go on over more lines).
SERVER_LINE = re.compile(r"^(\(root\)|/.*?) \(([A-Za-z$]+)\): ", re.MULTILINE)


# --- instances ----------------------------------------------------------------------------------

POOL = [None, True, False, 0, 1, -1, 2.5, 1e15, "", "a", "1", "é", [], [1], {}, {"a": 1}]


def floatified(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return float(value) if abs(value) < 2**53 else value
    if isinstance(value, list):
        return [floatified(v) for v in value]
    if isinstance(value, dict):
        return {k: floatified(v) for k, v in value.items()}
    return value


def locations(value: Any, path=()):
    yield path
    if isinstance(value, list):
        for i, v in enumerate(value):
            yield from locations(v, path + (i,))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from locations(v, path + (k,))


def get(value: Any, path):
    for p in path:
        value = value[p]
    return value


def mutated_node(rng: random.Random, node: Any, is_root: bool) -> Any:
    """One random change of `node` (the arguments object itself stays an object)."""
    ops = [] if is_root else ["swap"]
    if isinstance(node, bool) or node is None:
        pass
    elif isinstance(node, (int, float)):
        ops += ["num"] * 3
    elif isinstance(node, str):
        ops += ["str"] * 3
    elif isinstance(node, list):
        ops += ["list"] * 3
    elif isinstance(node, dict):
        ops += ["dict"] * 3
    if not ops:
        return rng.choice(POOL)
    op = rng.choice(ops)
    if op == "swap":
        return copy.deepcopy(rng.choice(POOL))
    if op == "num":
        return rng.choice([node + 1, node - 1, node + 0.5, -node, node * 10, float(node), 0])
    if op == "str":
        return rng.choice([node + "x", node[:-1], node + node, node.upper(), "é" + node, node + "日本", "",
                           node + " ", node.replace("-", "")])
    if op == "list":
        choice = rng.randrange(5)
        out = list(node)
        if choice == 0 and out:
            out.pop(rng.randrange(len(out)))
        elif choice == 1 and out:
            out.append(copy.deepcopy(rng.choice(out)))
        elif choice == 2:
            out.append(copy.deepcopy(rng.choice(POOL)))
        elif choice == 3:
            out.reverse()
        else:
            out = []
        return out
    out = dict(node)
    choice = rng.randrange(4)
    if choice == 0 and out:
        del out[rng.choice(sorted(out))]
    elif choice == 1:
        out[rng.choice(["extra", "x-extra", "n_1", "Extra"])] = copy.deepcopy(rng.choice(POOL))
    elif choice == 2 and out:
        out[rng.choice(sorted(out))] = None
    elif out:
        k = rng.choice(sorted(out))
        out[k + "_"] = out.pop(k)
    return out


def mutate(rng: random.Random, args: dict) -> dict:
    args = copy.deepcopy(args)
    path = rng.choice(list(locations(args)))
    new = mutated_node(rng, get(args, path), path == ())
    if path == ():
        return new
    get(args, path[:-1])[path[-1]] = new
    return args


def ambiguous(value: Any) -> bool:
    """Instances on which the RFCs leave room for both verdicts (see the module's docstring)."""
    if isinstance(value, str):
        return "XN--" in value.upper() and "xn--" not in value
    if isinstance(value, list):
        return any(ambiguous(v) for v in value)
    if isinstance(value, dict):
        return any(ambiguous(v) for v in value.values())
    return False


def key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def instances(name: str, tool: dict) -> list[dict]:
    if "x-values" in tool:
        seeds = [{"value": v} for v in tool["x-values"]]
    else:
        seeds = list(tool["x-examples"])
    out: dict[str, dict] = {}
    for s in seeds + [floatified(s) for s in seeds]:
        out.setdefault(key(s), s)
    rng = random.Random(f"{SEED}:{name}")
    base = list(out.values())
    attempts = 0
    while len(out) < INSTANCES and attempts < 50 * INSTANCES:
        attempts += 1
        inst = mutate(rng, rng.choice(base))
        if rng.random() < 0.3:
            inst = mutate(rng, inst)
        if not ambiguous(inst):
            out.setdefault(key(inst), inst)
    return list(out.values())


# --- comparing what the handler received with what was sent -------------------------------------

OBJECT_OPEN_KEYWORDS = ("additionalProperties", "patternProperties", "propertyNames", "minProperties",
                        "maxProperties", "unevaluatedProperties")


def group(schema: Any) -> list[dict]:
    """The schema nodes that apply at one location: the node, its `$ref` target and subschemas."""
    out, todo, seen = [], [schema], set()
    while todo:
        node = todo.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            todo.append(DEFS[ref[len("#/$defs/"):]])
        for k in ("allOf", "anyOf", "oneOf"):
            todo.extend(node.get(k, []))
        for k in ("then", "else"):
            if k in node:
                todo.append(node[k])
        todo.extend(node.get("dependentSchemas", {}).values())
    return out


def property_schemas(nodes: list[dict], name: str) -> list[dict]:
    return [n["properties"][name] for n in nodes if isinstance(n.get("properties"), dict) and name in n["properties"]]


def droppable(nodes: list[dict], name: str) -> bool:
    """A sent property the typed value may ignore: no keyword at this location mentions it."""
    if not any("properties" in n for n in nodes) or any(k in n for n in nodes for k in OBJECT_OPEN_KEYWORDS):
        return False
    if property_schemas(nodes, name) or any(name in n.get("required", []) for n in nodes):
        return False
    return not any(name in v for n in nodes for v in n.get("dependentRequired", {}).values())


def optional(nodes: list[dict], name: str) -> bool:
    return not any(name in n.get("required", []) for n in nodes)


def empty(value: Any) -> bool:
    """`null` or `[]`: an optional property's typed value (`Option`, a defaulted `Vec`) is the same
    whether it was sent so or left out."""
    return value is None or value == []


def item_schema(nodes: list[dict], index: int) -> Any:
    for n in nodes:
        prefix = n.get("prefixItems", [])
        if index < len(prefix):
            return prefix[index]
    for n in nodes:
        if isinstance(n.get("items"), dict):
            return n["items"]
    return None


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality: numbers by value, booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def same_string(sent: str, got: str) -> bool:
    if sent == got:
        return True
    try:  # date-time: same instant and same offset (`Z` reads `+00:00`)
        a, b = datetime.fromisoformat(sent.upper()), datetime.fromisoformat(got.upper())
        if "T" in sent.upper() and a.tzinfo is not None and a == b and a.utcoffset() == b.utcoffset():
            return True
    except ValueError:
        pass
    try:  # uuid: hex digits in either case
        if len(sent) == 36 and uuid.UUID(sent) == uuid.UUID(got):
            return True
    except ValueError:
        pass
    try:  # ipv6: any spelling of the same address
        if ":" in sent and ipaddress.IPv6Address(sent) == ipaddress.IPv6Address(got):
            return True
    except ValueError:
        pass
    return False


def same(schema: Any, sent: Any, got: Any, path: str = "") -> list[str]:
    """Where `got` (what the handler received) differs from `sent`, beyond the normalisations."""
    where = path or "(root)"
    if isinstance(sent, str) and isinstance(got, str):
        return [] if same_string(sent, got) else [f"{where}: sent {sent!r}, received {got!r}"]
    if isinstance(sent, list) and isinstance(got, list):
        if len(sent) != len(got):
            return [f"{where}: sent {len(sent)} items, received {len(got)}"]
        nodes = group(schema)
        return [d for i, (s, g) in enumerate(zip(sent, got)) for d in same(item_schema(nodes, i), s, g, f"{path}/{i}")]
    if isinstance(sent, dict) and isinstance(got, dict):
        nodes, out = group(schema), []
        for k, s in sent.items():
            child = f"{path}/{k}"
            subs = property_schemas(nodes, k)
            if k in got:
                out += same(subs[0] if subs else None, s, got[k], child)
            elif not droppable(nodes, k) and not (empty(s) and optional(nodes, k)):
                out.append(f"{child}: sent {json.dumps(s)}, not received")
        for k, g in got.items():
            if k not in sent:
                defaults = [s["default"] for s in property_schemas(nodes, k) if "default" in s]
                if not any(json_equal(d, g) for d in defaults):
                    out.append(f"{path}/{k}: not sent, received {json.dumps(g)}")
        return out
    return [] if json_equal(sent, got) else [f"{where}: sent {json.dumps(sent)}, received {json.dumps(got)}"]


# --- the server ---------------------------------------------------------------------------------

class Server:
    """The differential binary over stdio, spoken to in raw JSON-RPC 2.0."""

    def __init__(self):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([str(binary("differential")), "--log-level", "error"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        init = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "differential-test", "version": "1"}})
        assert init["result"]["protocolVersion"] == "2025-11-25", init
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools: dict[str, dict] = {}
        cursor = None
        while True:
            page = self.request("tools/list", {"cursor": cursor} if cursor else {})["result"]
            self.tools.update({t["name"]: t for t in page["tools"]})
            cursor = page.get("nextCursor")
            if not cursor:
                break

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.lines.get(timeout=CALL_TIMEOUT)
            assert line is not None, f"the server exited: {self.stderr()}"
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.close()


# --- the tests ----------------------------------------------------------------------------------

def test_the_crate_serves_the_corpus():
    """The example crate's spec is the corpus (its `$schema` path aside), every tool of it."""
    missing = sorted(set(CORPUS["tools"]) - set(CRATE_SPEC["tools"]))
    assert not missing, (
        f"corpus tools the differential crate does not serve: {missing}; copy "
        f"{CORPUS_PATH.relative_to(ROOT)} to {CRATE_SPEC_PATH.relative_to(ROOT)} and run `mcpgen generate` "
        "(each new stub's body becomes `echo(&args)`)")
    assert CRATE_SPEC == CORPUS


def verdict(errors: list) -> str:
    return "rejects: " + "; ".join(f"{p} [{k}] {m}" for p, k, m, _ in errors) if errors else "accepts"


def check_call(name: str, schema: dict, args: dict, errors: list, response: dict) -> str | None:
    """None when the server agrees with the oracle's `errors` on `args`, else what differs."""
    if "result" not in response:
        return f"JSON-RPC error {json.dumps(response.get('error'))}"
    result = response["result"]
    content = result.get("content", [])
    text = content[0].get("text", "") if len(content) == 1 and content[0].get("type") == "text" else None
    if text is None:
        return f"not one text block: {json.dumps(result)}"
    if not errors:
        if result.get("isError"):
            return f"server rejects: {text}"
        if result.get("structuredContent") != {"result": text}:
            return f"structuredContent is not {{\"result\": text}}: {json.dumps(result)}"
        try:
            received = json.loads(text)
        except ValueError:
            return f"the handler's answer is not JSON: {text!r}"
        diffs = same(schema, args, received)
        return f"handler received {text}: " + "; ".join(diffs) if diffs else None
    if not result.get("isError"):
        return f"server accepts (handler received {text})"
    if "structuredContent" in result:
        return f"an isError result with structuredContent: {json.dumps(result)}"
    prefix = f"Error executing tool {name}: "
    if not text.startswith(prefix):
        return f"server rejects, text does not start with {prefix!r}: {text}"
    body = text[len(prefix):]
    # A violation is named by its pointer, or inside the arguments by one beneath it (`items:
    # false` is located at the array by the oracle, at the extra item by the Rust validator). A
    # `false` subschema's violation (keyword None) comes without the path that led to it from
    # jsonschema's `descend`, so one beneath its location names it even at the root.
    def named(p: str, keyword: str) -> bool:
        if p == "(root)":
            return "(root)" in body or (keyword == "None" and re.search(r"(?<![\w/~.-])/", body) is not None)
        return re.search(r"(?<![\w/~.-])" + re.escape(p) + r"(?![\w~.-])", body) is not None

    unnamed = [p for p, k, _, _ in errors if not named(p, k)]
    if unnamed:
        return f"server rejects, but its text names no violation at {sorted(set(unnamed))}: {text}"
    # Where both name a pointer, they name the same keywords there.
    server_at: dict[str, set[str]] = {}
    for p, k in SERVER_LINE.findall(body):
        server_at.setdefault(p, set()).add(k)
    oracle_at: dict[str, set[str]] = {}
    for p, _, _, k in errors:
        if k is not None:
            oracle_at.setdefault(p, set()).add(k)
    differ = [f"{p}: server {sorted(server_at[p])}, oracle {sorted(ks)}"
              for p, ks in sorted(oracle_at.items()) if p in server_at and server_at[p] != ks]
    if differ:
        return f"server rejects, naming other keywords ({'; '.join(differ)}): {text}"
    return None


@pytest.mark.parametrize("name", sorted(CORPUS["tools"]))
def test_server_agrees_with_the_oracle(server, name):
    tool = CORPUS["tools"][name]
    schema = standalone(tool["input"])
    spec_oracle = oracle(schema)
    assert name in server.tools, f"the server does not list corpus tool {name!r} (see test_the_crate_serves_the_corpus)"
    advertised = server.tools[name]["inputSchema"]
    adv_oracle = oracle(advertised)
    cases = instances(name, tool)
    disagreements, valid, invalid = [], 0, 0
    for args in cases:
        errors = violations(spec_oracle, args)
        valid, invalid = valid + (not errors), invalid + bool(errors)
        problems = []
        if bool(errors) != (not adv_oracle.is_valid(args)):
            problems.append(f"the oracle on the advertised inputSchema {verdict(violations(adv_oracle, args))}")
        response = server.request("tools/call", {"name": name, "arguments": args})
        problem = check_call(name, schema, args, errors, response)
        if problem:
            problems.append(problem)
        if problems:
            disagreements.append(f"  instance {json.dumps(args, ensure_ascii=False)}\n"
                                 f"    oracle {verdict(errors)}\n" + "".join(f"    {p}\n" for p in problems))
    assert valid >= MIN_EACH and invalid >= MIN_EACH, f"{name}: {valid} valid and {invalid} invalid instances"
    assert not disagreements, (
        f"{name}: {len(disagreements)} of {len(cases)} instances disagree\n"
        f"  schema {json.dumps(tool['input'], ensure_ascii=False)}\n" + "".join(disagreements)
        + (f"server log:\n{server.stderr()}" if server.stderr() else ""))
