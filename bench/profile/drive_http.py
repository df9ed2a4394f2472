#!/usr/bin/env python3
"""Drives a Streamable HTTP MCP server for exactly N stateless 2026-07-28 calls of one tool:
drive_http.py N TOOL COMMAND... (COMMAND gets `--transport http --bind 127.0.0.1:PORT`; used by
profile_http.sh under callgrind). One keep-alive connection, one request in flight."""
import http.client, json, signal, socket, subprocess, sys, time
n, tool = int(sys.argv[1]), sys.argv[2]
args = {"search_books": {"query": "dune", "limit": 5}, "reserve_book": {"title": "Dune"},
        "order_book": {"title": "Neuromancer"}}[tool]
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
p = subprocess.Popen(sys.argv[3:] + ["--transport", "http", "--bind", f"127.0.0.1:{port}"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
conn = None
for _ in range(600):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60); conn.connect(); break
    except OSError:
        time.sleep(0.1)
def call(i, params):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    conn.request("POST", "/mcp", body, {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool})
    r = conn.getresponse(); text = r.read().decode()
    for line in text.splitlines():  # SSE or plain JSON
        line = line[5:].strip() if line.startswith("data:") else line.strip()
        if line.startswith("{"):
            m = json.loads(line)
            if m.get("id") == i:
                return m
    raise SystemExit(f"no response: {r.status} {text[:300]}")
nid = 1
for _ in range(n):
    params = {"name": tool, "arguments": args, "_meta": META}
    for _round in range(3):
        res = call(nid, params)["result"]; nid += 1
        if res.get("resultType") == "input_required":
            k = next(iter(res["inputRequests"]))
            params = dict(params, inputResponses={k: {"action": "accept", "content": {"confirm": True}}},
                          requestState=res["requestState"])
            continue
        assert not res.get("isError"), res
        break
conn.close(); p.send_signal(signal.SIGINT); p.wait()
