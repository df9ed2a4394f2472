#!/usr/bin/env python3
"""Per-call callgrind costs: diff.py PREFIX incl|excl K compares PREFIX-50.cg and PREFIX-250.cg
and prints the K functions with the most instructions per call (difference / 200)."""
import subprocess, re, sys
def load(f, incl):
    out = subprocess.run(["callgrind_annotate", "--threshold=100"] + (["--inclusive=yes"] if incl else []) + [f], capture_output=True, text=True).stdout
    d = {}
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+(.*?) \[', line)
        if m: d[m.group(2)] = d.get(m.group(2), 0) + int(m.group(1).replace(',', ''))
    return d
pre, incl, k = sys.argv[1], sys.argv[2] == "incl", int(sys.argv[3])
a, b = load(pre + "-50.cg", incl), load(pre + "-250.cg", incl)
rows = sorted(((b.get(f, 0) - a.get(f, 0)) / 200, f) for f in b)
for v, f in rows[::-1][:k]:
    name = re.sub(r'^(/root/.cargo/registry/src/[^/]+/|/rustc/[0-9a-f]+/|[?]+:)', '', f)
    name = name.split(':', 1)[1] if name.startswith(('src/','library/','rmcp-','tokio-','serde','axum','hyper')) and ':' in name else name
    print(f"{v:>10,.0f}  {name[:150]}")
