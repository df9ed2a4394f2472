#!/usr/bin/env python3
"""Drives a stdio MCP server for exactly N calls of one workload (legacy or modern era):
drive.py legacy|modern N TOOL COMMAND... (used by profile.sh under callgrind)."""
import json, subprocess, sys
era, n, tool = sys.argv[1], int(sys.argv[2]), sys.argv[3]
args = {"search_books": {"query":"dune","limit":5}, "reserve_book": {"title":"Dune"}, "order_book": {"title":"Neuromancer"}}[tool]
cmd = sys.argv[4:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
META = {"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}
def send(m): p.stdin.write(json.dumps(m)+"\n"); p.stdin.flush()
def resp(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("method") == "elicitation/create":
            send({"jsonrpc":"2.0","id":m["id"],"result":{"action":"accept","content":{"confirm":True}}}); continue
        if m.get("id") == i: return m
nid = 1
if era == "legacy":
    send({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"x","version":"1"}}}); resp(0)
    send({"jsonrpc":"2.0","method":"notifications/initialized"})
for _ in range(n):
    params = {"name": tool, "arguments": args}
    for _round in range(3):
        if era == "modern": params["_meta"] = META
        send({"jsonrpc":"2.0","id":nid,"method":"tools/call","params":params}); r = resp(nid); nid += 1
        res = r["result"]
        if res.get("resultType") == "input_required":
            k = next(iter(res["inputRequests"]))
            params = dict(params, inputResponses={k: {"action":"accept","content":{"confirm":True}}}, requestState=res["requestState"])
            continue
        assert "isError" in res and not res["isError"], r
        break
p.stdin.close(); p.wait()
