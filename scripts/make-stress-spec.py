#!/usr/bin/env python3
"""Writes specs/stress.json: many tools and a deep resolver graph exercising every kind of
parameter, binding and output (its generated crate must build without warnings, stubs
untouched). Deterministic: rerun to regenerate the same file."""
import json, pathlib

defs = {
    "Customer": {"type": "object", "description": "A customer.",
                 "properties": {"id": {"type": "string"}, "tier": {"type": "string", "enum": ["gold", "silver"]}},
                 "required": ["id", "tier"]},
    "Confirm": {"type": "object", "properties": {"ok": {"type": "boolean", "description": "Go ahead?"},
                                                  "note": {"type": "string", "maxLength": 200}},
                "required": ["ok"]},
    "Quote": {"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}},
              "required": ["amount", "currency"]},
    "Tags": {"type": "array", "items": {"type": "string"}},
}
resolvers = {
    "base": {"description": "Depth 0: from the arguments.", "params": {"account": "arg"}, "returns": {"type": "string"}},
}
# A chain of depth 10 with a diamond at every level.
for i in range(1, 11):
    prev = "base" if i == 1 else f"level_{i-1}"
    resolvers[f"side_{i}"] = {"params": {"up": {"resolver": prev}}, "returns": {"type": "integer"}}
    resolvers[f"level_{i}"] = {"description": f"Depth {i}.",
                               "params": {"up": {"resolver": prev}, "side": {"resolver": f"side_{i}"}, "ctx_info": "context"},
                               "returns": {"type": "string"}}
resolvers.update({
    "customer": {"params": {"account": "arg", "verbose": "arg"}, "returns": {"$ref": "#/$defs/Customer"}},
    "quote": {"params": {"customer": {"resolver": "customer"}, "amount": "arg"}, "returns": {"$ref": "#/$defs/Quote"}},
    "confirm": {"params": {"quote": {"resolver": "quote"}}, "returns": {"$ref": "#/$defs/Confirm"}, "asks": "elicit"},
    "after_confirm": {"params": {"confirm": {"resolver": "confirm"}}, "returns": {"type": "boolean"}},
    "advice": {"params": {"topic": "arg"}, "asks": "sample"},
    "workspace": {"params": {}, "asks": "roots"},
    "limit_of": {"params": {"count": "arg", "tags": "arg"}, "returns": {"type": "integer"}},
    "type": {"description": "A resolver named like a Rust keyword.", "params": {"match": "arg"}, "returns": {"type": "string"}},
})

account = {"type": "string", "minLength": 3, "description": "Account id."}
tools = {}
for i in range(1, 21):
    depth = (i % 10) + 1
    tools[f"deep_{i:02}"] = {
        "description": f"Tool {i} at resolver depth {depth}.",
        "input": {"type": "object", "properties": {"account": account, "page": {"type": "integer", "minimum": 1}},
                  "required": ["account"]},
        "output": {"type": "string"},
        "resolve": {"value": f"level_{depth}"},
    }
tools.update({
    "checkout": {
        "title": "Check out", "description": "Everything at once.",
        "annotations": {"destructiveHint": True, "idempotentHint": False},
        "input": {"type": "object", "properties": {
            "account": {"type": "string"}, "verbose": {"type": "boolean", "default": False},
            "amount": {"type": "number", "minimum": 0}, "topic": {"type": "string"}},
            "required": ["account", "amount", "topic"]},
        "output": {"$ref": "#/$defs/Quote"},
        "resolve": {"customer": "customer", "quote": "quote", "confirm": {"resolver": "confirm", "outcome": True},
                    "confirmed": "after_confirm", "advice": "advice", "roots": "workspace", "top": "level_10",
                    "quote_again": "quote"},
    },
    "count.items": {"description": "Dots in the name; integer and array arguments.",
                     "input": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 0, "maximum": 255},
                                                                "tags": {"$ref": "#/$defs/Tags"}},
                               "required": ["count", "tags"]},
                     "output": {"type": "array", "items": {"type": "integer"}},
                     "resolve": {"limit": "limit_of"}},
    "count-more": {"description": "Dashes in the name; an optional integer argument.",
                    "input": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1},
                                                               "tags": {"$ref": "#/$defs/Tags"}},
                              "required": ["count", "tags"]},
                    "resolve": {"limit": "limit_of"}},
    "match": {"description": "A tool named like a Rust keyword, with no input and no output."},
    "keyword_args": {"description": "Arguments named like Rust keywords.",
                     "input": {"type": "object", "properties": {"match": {"type": "string"}, "type": {"type": "string"}},
                               "required": ["match"]},
                     "output": {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]},
                     "resolve": {"kind": "type"}},
})
spec = {"$schema": "../schema/spec-v1.json", "name": "Stress", "version": "0.1.0", "title": "Stress test",
        "instructions": "Generated by scripts/make-stress-spec.py.", "$defs": defs, "resolvers": resolvers, "tools": tools}
root = pathlib.Path(__file__).resolve().parent.parent
(root / "specs" / "stress.json").write_text(json.dumps(spec, indent=2) + "\n")
