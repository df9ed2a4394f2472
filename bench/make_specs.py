#!/usr/bin/env python3
"""Writes synthetic mcpgen specs with N tools and a resolver graph ten levels deep.

`make_specs.py OUTDIR 10 100 1000` writes OUTDIR/tools-N.json for each N. Deterministic.
Shape (see specs/stress.json and ../shared/design/spec-v1.md): a chain base -> level_1 ..
level_10 with a diamond (side_i) at every level; per ten tools one elicit resolver; tools
cycle through depths 1..10, every tool has its own plain resolver (so the graph grows with N),
every fifth tool also takes a $defs object argument and every tenth asks (elicit).
"""
import json
import pathlib
import sys


def spec(n: int) -> dict:
    defs = {
        "Customer": {"type": "object", "description": "A customer.",
                     "properties": {"id": {"type": "string"}, "tier": {"type": "string", "enum": ["gold", "silver"]}},
                     "required": ["id", "tier"]},
        "Confirm": {"type": "object", "properties": {"ok": {"type": "boolean", "description": "Go ahead?"}},
                    "required": ["ok"]},
    }
    resolvers = {"base": {"description": "Depth 0.", "params": {"account": "arg"}, "returns": {"type": "string"}}}
    for i in range(1, 11):
        prev = "base" if i == 1 else f"level_{i-1}"
        resolvers[f"side_{i}"] = {"params": {"up": {"resolver": prev}}, "returns": {"type": "integer"}}
        resolvers[f"level_{i}"] = {"description": f"Depth {i}.",
                                   "params": {"up": {"resolver": prev}, "side": {"resolver": f"side_{i}"}},
                                   "returns": {"type": "string"}}
    tools = {}
    for i in range(n):
        depth = i % 10 + 1
        own = f"own_{i:04}"
        resolvers[own] = {"description": f"Tool {i}'s own resolver.",
                          "params": {"account": "arg", "up": {"resolver": f"level_{depth}"}},
                          "returns": {"$ref": "#/$defs/Customer"} if i % 2 else {"type": "integer"}}
        props = {"account": {"type": "string", "minLength": 3, "description": "Account id."},
                 "page": {"type": "integer", "minimum": 1, "maximum": 1000}}
        if i % 5 == 0:
            props["customer"] = {"$ref": "#/$defs/Customer"}
        resolve = {"value": f"level_{depth}", "own": own}
        if i % 10 == 0:
            ask = f"confirm_{i:04}"
            resolvers[ask] = {"params": {"value": {"resolver": f"level_{depth}"}},
                              "returns": {"$ref": "#/$defs/Confirm"}, "asks": "elicit"}
            resolve["confirm"] = {"resolver": ask, "outcome": True}
        tools[f"tool_{i:04}"] = {
            "description": f"Synthetic tool {i} at resolver depth {depth}.",
            "input": {"type": "object", "properties": props, "required": ["account"]},
            "output": {"type": "string"},
            "resolve": resolve,
        }
    return {"name": f"Synthetic{n}", "version": "0.1.0",
            "instructions": f"{n} synthetic tools (bench/make_specs.py).",
            "$defs": defs, "resolvers": resolvers, "tools": tools}


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for arg in sys.argv[2:]:
        n = int(arg)
        (out / f"tools-{n}.json").write_text(json.dumps(spec(n), indent=2) + "\n")
