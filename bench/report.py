#!/usr/bin/env python3
"""Writes BENCHMARKS.md (tables) and an SVG chart from one bench run's work directory
(servers.json from loadgen, gen.json from genbench.py, seal-*.txt, auth-verify.txt from
auth_bench, auth.json from loadgen: the bookshop with and without authorization, telemetry.json
and telemetry-sink.json: the bookshop with telemetry off and on). Standard
library only.

report.py --work DIR --out BENCHMARKS.md --chart chart.svg [--quick 0|1]
Exit 1 if the run recorded errors."""
import argparse
import datetime
import json
import math
import os
import pathlib
import platform
import re
import statistics
import subprocess

SERVERS = ["generated", "handwritten", "python", "ceiling"]
LABEL = {"generated": "generated (mcpgen)", "handwritten": "hand-written rmcp 3.11",
         "python": "Python MCPServer 2.3.0", "ceiling": "raw ceiling"}
COLOR = {"generated": "#1f77b4", "handwritten": "#ff7f0e", "python": "#2ca02c", "ceiling": "#7f7f7f"}
ROOT = pathlib.Path(__file__).resolve().parent.parent


def sh(cmd, cwd=ROOT):
    try:
        return subprocess.run(cmd, cwd=cwd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001
        return "?"


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_n(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fmt_r(xs):
    if not xs:
        return "—"
    m = med(xs)
    spread = f" ({min(xs):.2f}–{max(xs):.2f})" if len(xs) > 1 else ""
    return f"**{m:.2f}**{spread}" if m < 10 else f"**{m:.0f}x**" + (f" ({min(xs):.0f}–{max(xs):.0f})" if len(xs) > 1 else "")


def workload_key(r):
    return (r["transport"], r["era"], r["tool"], r["conc"])


def wl_name(k):
    t, era, tool, conc = k
    return f"{t} {era} {tool}" + (f" c={conc}" if t == "http" else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chart", required=True)
    ap.add_argument("--quick", default="0")
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    quick = a.quick == "1"
    errors = []
    servers = json.loads((work / "servers.json").read_text()) if (work / "servers.json").exists() else None
    gen = json.loads((work / "gen.json").read_text()) if (work / "gen.json").exists() else None
    if servers is None:
        errors.append("no servers.json: the load client did not finish")
    if gen is None:
        errors.append("no gen.json: the generator bench did not finish")
    out = []
    w = out.append

    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem = sh("grep -m1 MemTotal /proc/meminfo | awk '{printf \"%.1f GiB\", $2/1048576}'")
    py = ROOT / ".cache/peers/venv/bin/python"
    versions = {
        "rustc": sh("rustc -V"),
        "rmcp": sh("grep -A1 '^name = \"rmcp\"' generated-examples/Cargo.lock | sed -n 2p | cut -d'\"' -f2"),
        "python": sh(f"{py} -V"),
        "mcp (PyPI)": sh(f"{py} -c 'import importlib.metadata as m; print(m.version(\"mcp\"))'"),
        # The commit that was built and measured (run.sh records it before building), not the
        # one the report happens to be rendered at.
        "mcpgen commit": (work / "commit").read_text().strip()
        if (work / "commit").exists()
        else sh("git describe --always --dirty"),
    }
    stamp = (work / "servers.json").stat().st_mtime if (work / "servers.json").exists() else None
    now = datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc) if stamp else datetime.datetime.now(datetime.timezone.utc)
    now = now.strftime("%Y-%m-%d %H:%M UTC")
    w("# Benchmarks\n")
    w(f"Written by `bench/run.sh{' --quick' if quick else ''}` from **one run** on one machine (servers measured until {now}).  ")
    w(f"Machine: {os.cpu_count()} CPUs ({cpu}), {mem} RAM, {platform.system()} {platform.release()}; "
      f"shared with other work, so absolute figures move between runs: compare the **ratios**, "
      f"measured side by side (servers interleaved per workload, order rotated every repetition).  ")
    w("Versions: " + ", ".join(f"{k} `{v}`" for k, v in versions.items()) + ".\n")
    if servers:
        w(f"Each figure is the median of {servers['reps']} repetitions of {servers['ms']} ms "
          f"(after a warm-up); spreads are min–max over the repetitions. Ratios are computed per "
          f"repetition (the servers of one repetition ran back to back) and then summarised.\n")
    w("Reproduce: `bench/run.sh` (about 15 minutes on 2 cores once the release builds exist, "
      "most of it the clean debug builds of the generated crates; the release builds with "
      "whole-program optimisation add about 15 more from nothing); `bench/run.sh --quick` is the "
      "CI smoke (see `bench/README.md`).\n")

    # ---------------------------------------------------------------- servers
    by = {}
    if servers:
        for r in servers["records"]:
            by.setdefault(workload_key(r), {}).setdefault(r["server"], {})[r["rep"]] = r
            if r["errors"]:
                errors.append(f"{wl_name(workload_key(r))} {r['server']} rep {r['rep']}: {r['first_error']}")
    keys = sorted(by, key=lambda k: (k[0] != "stdio", k[1], ["search_books", "reserve_book", "order_book"].index(k[2]), k[3]))

    def thr(k, s):
        return [x["calls_per_s"] for x in by[k].get(s, {}).values()]

    def ratios(k, a_, b_):
        reps = set(by[k].get(a_, {})) & set(by[k].get(b_, {}))
        return [by[k][a_][i]["calls_per_s"] / by[k][b_][i]["calls_per_s"]
                for i in sorted(reps) if by[k][b_][i]["calls_per_s"] > 0]

    summary = {"hw": [], "py": {"stdio": [], "http": []}}
    for k in keys:
        r = ratios(k, "generated", "handwritten")
        if r:
            summary["hw"].append((med(r), k))
        p = ratios(k, "generated", "python")
        if p:
            summary["py"][k[0]].append((med(p), k))

    # ---------------------------------------------------------------- generator
    g1000 = None
    growth = None
    if gen:
        rows = {row["tools"]: row for row in gen["generate"]}
        if 1000 in rows:
            g1000 = rows[1000].get("new_median_s")
        if 100 in rows and 1000 in rows and rows[100].get("new_median_s") and g1000:
            growth = g1000 / rows[100]["new_median_s"]

    # ---------------------------------------------------------------- targets
    w("## Targets (issue 7)\n")
    w("| target | result | met? |\n|---|---|---|")
    if summary["hw"]:
        worst = min(summary["hw"])
        below = [wl_name(k) for m, k in summary["hw"] if m < 0.95]
        w(f"| generated / hand-written throughput ≥ 0.95 on every workload | lowest {worst[0]:.2f} "
          f"({wl_name(worst[1])}); {len(below)} of {len(summary['hw'])} workloads below 0.95 | "
          f"{'**met**' if not below else '**missed**'} |")
    for t in ("stdio", "http"):
        if summary["py"][t]:
            worst = min(summary["py"][t])
            w(f"| generated / Python ≥ 20x on {t} | lowest {worst[0]:.1f}x ({wl_name(worst[1])}) | "
              f"{'**met**' if worst[0] >= 20 else '**missed**'} |")
    if g1000 is not None:
        w(f"| `mcpgen new` of 1,000 tools < 2 s | {g1000:.2f} s | {'**met**' if g1000 < 2 else '**missed**'} |")
    if growth is not None:
        w(f"| growth no worse than linear (100 → 1,000 tools) | time x{growth:.1f} for 10x the tools | "
          f"{'**met**' if growth <= 12 else '**missed**'} |")
    w("")
    if summary["hw"]:
        below = [(m, k) for m, k in summary["hw"] if m < 0.95]
        if below:
            w("Workloads where the generated server is below 0.95 of the hand-written one: "
              + "; ".join(f"{wl_name(k)} ({m:.2f})" for m, k in sorted(below)) + ". "
              "The causes are in *Findings* below.\n")
    findings = ROOT / "bench" / "FINDINGS.md"
    if findings.exists() and not quick:
        w(findings.read_text().rstrip() + "\n")

    # ---------------------------------------------------------------- tables
    if keys:
        w("## Throughput (calls/s, median over repetitions) and ratios\n")
        w("A call is one complete `tools/call`: for order_book (out-of-stock title) on 2025-11-25 it "
          "includes the server's `elicitation/create` and the client's answer; on 2026-07-28 it is two "
          "requests (`input_required`, then the retry with `inputResponses` and the sealed `requestState`). "
          "stdio is sequential (one request in flight); HTTP runs c keep-alive connections, each with "
          "its own session on 2025-11-25.\n")
        w("| workload | generated | hand-written | Python | ceiling | gen / hand-written | gen / Python | gen / ceiling | hand-written / Python |")
        w("|---|---|---|---|---|---|---|---|---|")
        for k in keys:
            cells = [fmt_n(med(thr(k, s))) for s in SERVERS]
            w(f"| {wl_name(k)} | " + " | ".join(cells) + " | "
              + " | ".join(fmt_r(ratios(k, "generated", b)) for b in ("handwritten", "python", "ceiling"))
              + " | " + fmt_r(ratios(k, "handwritten", "python")) + " |")
        w("")
        w("## Sequential latency (µs, p50 / p99, median over repetitions)\n")
        w("| workload | generated | hand-written | Python | ceiling |\n|---|---|---|---|---|")
        for k in keys:
            if k[3] != 1:
                continue
            cells = []
            for s in SERVERS:
                recs = list(by[k].get(s, {}).values())
                cells.append(f"{med([x['p50_us'] for x in recs]):,.0f} / {med([x['p99_us'] for x in recs]):,.0f}" if recs else "—")
            w(f"| {wl_name(k)} | " + " | ".join(cells) + " |")
        w("")
    if servers and servers.get("memory"):
        w("## Resident memory (MiB)\n")
        w("Idle: after start-up and one call. Peak: the process's high-water mark (VmHWM) after all "
          "its workloads (HTTP: c=64 with one session per connection on 2025-11-25).\n")
        w("| server | stdio 2025-11-25 idle / peak | stdio 2026-07-28 idle / peak | HTTP idle / peak |\n|---|---|---|---|")
        mem_by = {}
        for m in servers["memory"]:
            mem_by[(m["server"], m["transport"], m["era"])] = m
        for s in SERVERS:
            cells = []
            for t, era in (("stdio", "2025-11-25"), ("stdio", "2026-07-28"), ("http", "both")):
                m = mem_by.get((s, t, era))
                cells.append(f"{m['idle_kb']/1024:.1f} / {m['peak_kb']/1024:.1f}" if m else "—")
            w(f"| {LABEL[s]} | " + " | ".join(cells) + " |")
        w("")

    # ---------------------------------------------------------------- generator
    if gen:
        w("## The generator\n")
        w("Synthetic specs from `bench/make_specs.py`: N tools over a resolver chain ten levels deep "
          "with a diamond at every level, one own resolver per tool, an elicit resolver per ten tools. "
          "Times are wall-clock medians (s) of the release `mcpgen` binary: `check` validates, `new` "
          "writes a complete crate, `generate` rewrites `src/generated/` after a one-tool spec change.\n")
        w("| tools | resolvers | spec KiB | generated lines | check | new | generate | new, µs per tool |")
        w("|---|---|---|---|---|---|---|---|")
        for row in gen["generate"]:
            n = row["tools"]
            nm = row.get("new_median_s")
            w(f"| {n:,} | {row['resolvers']:,} | {row['spec_bytes']/1024:,.0f} | {row.get('lines', 0):,} | "
              f"{row.get('check_median_s') or float('nan'):.3f} | {nm or float('nan'):.3f} | "
              f"{row.get('generate_median_s') or float('nan'):.3f} | {(nm or 0)/n*1e6:,.0f} |")
        w("")
        if gen["build"]:
            w("Builds of the generated crates (`cargo build`, debug profile as in the README, a fresh "
              "target directory per crate so *clean* includes every dependency; *incremental*: change one "
              "tool's description, `mcpgen generate`, `cargo build`; *handlers edit*: append to "
              "`src/handlers.rs`, `cargo build`).\n")
            w("| tools | clean build (s) | no-op (s) | incremental after a spec change (s) | handlers edit (s) |\n|---|---|---|---|---|")
            for row in gen["build"]:
                w(f"| {row['tools']} | {row.get('clean_s', float('nan')):.1f} | {row.get('noop_s', float('nan')):.2f} | "
                  f"{row.get('incremental_s', float('nan')):.1f} | {row.get('handlers_edit_s', float('nan')):.1f} |")
            w("")
            for row in gen["build"]:
                if "clean_without_telemetry_s" in row and "clean_s" in row:
                    w(f"Without the default feature `telemetry` (`cargo build --no-default-features`), the "
                      f"clean build of {row['tools']} tools takes {row['clean_without_telemetry_s']:.1f} s "
                      f"instead of {row['clean_s']:.1f} s.\n")
        shop = gen.get("bookshop")
        if shop:
            w("### Build cost of the README's first command\n")
            w(f"The crate `mcpgen new bookshop --spec {pathlib.Path(shop['spec']).name}` writes (its "
              "default features; a fresh target directory, dependencies included; the examples' "
              "`Cargo.lock` versions, trimmed by cargo to what the crate uses). *Locked*: packages in its "
              "`Cargo.lock` (every platform's, as cargo locks them); *compiled*: those its build "
              "compiles here (`cargo tree -e normal,build`).\n")
            w("| measure | result | goal | met? |\n|---|---|---|---|")
            w(f"| clean debug build | {shop['clean_debug_s']:.1f} s | | |")
            edit = shop["handlers_edit_s"]
            w(f"| rebuild after a one-line edit of `src/handlers.rs` | {edit:.1f} s | < 3 s | "
              f"{'**met**' if edit < 3 else '**missed**'} |")
            w(f"| clean release build | {shop['clean_release_s']:.1f} s | | |")
            locked = shop["locked"]
            w(f"| packages locked (a spec without `auth`) | {locked} | < 200 | "
              f"{'**met**' if locked < 200 else '**missed**'} |")
            w(f"| packages compiled | {shop['compiled']} | | |")
            w(f"| compiles `jsonwebtoken` / `redis` | {'yes' if shop['jwt'] else 'no'} / "
              f"{'yes' if shop['redis'] else 'no'} | no / no | "
              f"{'**met**' if not shop['jwt'] and not shop['redis'] else '**missed**'} |")
            w("")
        for e in gen.get("errors", []):
            errors.append(e)

    # ---------------------------------------------------------------- seal
    seal = []
    for name, label in (("generated", "generated runtime (`state.rs`: AES-256-GCM + HKDF, JSON claims, `seal_bench`)"),
                        ("handwritten", "hand-written server (rmcp `RequestStateCodec`, HMAC-SHA256, associated data + TTL)")):
        p = work / f"seal-{name}.txt"
        if p.exists():
            m = re.search(r"\((\d+) chars, (\d+) iterations\): seal (\d+) ns/op, open (\d+) ns/op, seal\+open (\d+) ns/op", p.read_text())
            if m:
                seal.append((label, *m.groups()))
    if seal:
        w("## Sealing and opening one requestState\n")
        w("The same typical state (one recorded answer, two questions asked), single thread.\n")
        w("| implementation | token chars | seal (µs) | open (µs) | seal + open (µs) |\n|---|---|---|---|---|")
        for label, chars, it, s_, o_, b_ in seal:
            w(f"| {label} | {chars} | {int(s_)/1000:.1f} | {int(o_)/1000:.1f} | {int(b_)/1000:.1f} |")
        w("")

    # ---------------------------------------------------------------- authorization
    p = work / "auth-verify.txt"
    m = re.search(r"OAuth verify \((\d+) chars, (\d+) iterations, (\d+) tokens per algorithm\): "
                  r"warm (\d+) ns/op, miss (.*)", p.read_text()) if p.exists() else None
    if m:
        chars, it, toks, warm, miss = m.groups()
        w("## Verifying an OAuth access token\n")
        w(f"`OAuthVerifier::verify` of the generated runtime (`oauth.rs`: jsonwebtoken with RustCrypto; "
          f"`auth_bench`), one thread, the keys already fetched from a local JWKS. **Warm**: the same "
          f"{chars}-character RS256 access token again, {int(it):,} calls: the verified-token cache "
          f"answers (SHA-256 of the token, a lookup, the `exp`/`nbf` check); issue 19 asks for under "
          f"10 µs. **Miss**: a token not seen before ({int(toks):,} per algorithm): header, key, "
          f"signature, claims, the cache insert.\n")
        w("| path | µs per verification |\n|---|---|")
        w(f"| warm cache (RS256) | {int(warm)/1000:.2f} |")
        for alg, ns in re.findall(r"(\w+) (\d+) ns/op", miss):
            w(f"| miss: {alg} signature | {int(ns)/1000:.1f} |")
        w("")
    else:
        errors.append("no auth-verify.txt result: the token verification bench did not finish")
    auth = json.loads((work / "auth.json").read_text()) if (work / "auth.json").exists() else None
    if auth is None:
        errors.append("no auth.json: the authorization workload did not finish")
    else:
        pairs = {}
        for r in auth["records"]:
            pairs.setdefault(workload_key(r), {}).setdefault(r["server"], {})[r["rep"]] = r
            if r["errors"]:
                errors.append(f"{wl_name(workload_key(r))} {r['server']} authorization rep {r['rep']}: {r['first_error']}")
        w("## HTTP with and without authorization\n")
        w("The generated bookshop built with the runtime's feature `auth` (`--features mcpgen-runtime/auth`), twice, side by side as above: without authorization, and with "
          "`--auth-issuer`/`--auth-resource` naming the suite's authorization server (oidc-provider, "
          "`peers/authz`), every request carrying the same client-credentials access token (RS256 JWT, "
          "`Authorization: Bearer`): the front verifies it before rmcp sees the request (a warm "
          "verification after the first) and binds the principal to the session and requestState. "
          "Issue 19 asks for a ratio of at least 0.9 at c=16.\n")
        w("| workload | without (calls/s) | with (calls/s) | with / without | p50 without / with (µs) |\n|---|---|---|---|---|")
        for k in sorted(pairs, key=lambda k: (k[1], k[3])):
            a_, b_ = pairs[k].get("with", {}), pairs[k].get("without", {})
            reps = sorted(set(a_) & set(b_))
            rs = [a_[i]["calls_per_s"] / b_[i]["calls_per_s"] for i in reps if b_[i]["calls_per_s"] > 0]
            p50 = lambda d: fmt_n(med([x["p50_us"] for x in d.values()]))
            w(f"| {wl_name(k)} | {fmt_n(med([x['calls_per_s'] for x in b_.values()]))} | "
              f"{fmt_n(med([x['calls_per_s'] for x in a_.values()]))} | {fmt_r(rs)} | {p50(b_)} / {p50(a_)} |")
        w("")

    # ---------------------------------------------------------------- telemetry
    tel = json.loads((work / "telemetry.json").read_text()) if (work / "telemetry.json").exists() else None
    sink = json.loads((work / "telemetry-sink.json").read_text()) if (work / "telemetry-sink.json").exists() else None
    if tel is None:
        errors.append("no telemetry.json: the telemetry workload did not finish")
    else:
        pairs = {}
        for r in tel["records"]:
            pairs.setdefault(workload_key(r), {}).setdefault(r["server"], {})[r["rep"]] = r
            if r["errors"]:
                errors.append(f"{wl_name(workload_key(r))} telemetry {r['server']} rep {r['rep']}: {r['first_error']}")
        # Today's figure for the same workload: the generated bookshop of the side-by-side run.
        today = {}
        servers_json = work / "servers.json"
        if servers_json.exists():
            for r in json.loads(servers_json.read_text())["records"]:
                if r["server"] == "generated":
                    today.setdefault(workload_key(r), []).append(r["calls_per_s"])
        w("## HTTP with telemetry off and on\n")
        w("The generated bookshop built without its feature `telemetry` (**without**: no OpenTelemetry "
          "crate compiled in), and the default build twice, side by side as above: with no OpenTelemetry variables "
          "(**off**: the `mcp.server` spans' callsites are disabled, no attribute is evaluated and no "
          "histogram is recorded), and with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a local sink that "
          "answers every export at once (**on**: a SERVER span per request, a span per resolver, the "
          "operation histogram, batch export every second, `bench/otlp_sink.py`). \"today\" is the "
          "generated bookshop of the side-by-side table for the same workload in this run, so off "
          "against today is the spread between two runs of the same server.\n")
        w("| workload | today (calls/s, spread) | without (calls/s, spread) | off (calls/s, spread) | on (calls/s) | off / without | on / off | p50 without / off / on (µs) |\n|---|---|---|---|---|---|---|---|")
        for k in sorted(pairs, key=lambda k: (k[1], k[3])):
            on, off, without = (pairs[k].get(s_, {}) for s_ in ("on", "off", "without"))
            ratios_of = lambda a_, b_: [a_[i]["calls_per_s"] / b_[i]["calls_per_s"]
                                        for i in sorted(set(a_) & set(b_)) if b_[i]["calls_per_s"] > 0]
            spread = lambda xs: f"{fmt_n(med(xs))} ({fmt_n(min(xs))}–{fmt_n(max(xs))})" if xs else "—"
            p50 = lambda d: fmt_n(med([x["p50_us"] for x in d.values()])) if d else "—"
            w(f"| {wl_name(k)} | {spread(today.get(k, []))} | {spread([x['calls_per_s'] for x in without.values()])} | "
              f"{spread([x['calls_per_s'] for x in off.values()])} | "
              f"{fmt_n(med([x['calls_per_s'] for x in on.values()]))} | {fmt_r(ratios_of(off, without))} | "
              f"{fmt_r(ratios_of(on, off))} | {p50(without)} / {p50(off)} / {p50(on)} |")
        w("")
        binaries = work / "binaries.json"
        if binaries.exists():
            b = json.loads(binaries.read_text())
            w(f"The bookshop's binary ({'release' if not quick else 'debug'}) is {b['with'] / 1e6:.1f} MB with the "
              f"feature and {b['without'] / 1e6:.1f} MB without it ({(b['with'] - b['without']) / 1e6:+.1f} MB).\n")
        if sink is None:
            errors.append("no telemetry-sink.json: the OTLP sink did not report")
        else:
            calls = sum(r.get("calls", 0) for r in tel["records"] if r["server"] == "on")
            w(f"The sink received {sink['spans']:,} spans in {sink['requests'].get('/v1/traces', 0):,} "
              f"trace exports ({sink['bytes'].get('/v1/traces', 0) / 1e6:.1f} MB) and "
              f"{sink['requests'].get('/v1/metrics', 0):,} metric exports"
              + (f", for {calls:,} calls with telemetry on" if calls else "")
              + ". The batch span processor drops spans when its queue (`OTEL_BSP_MAX_QUEUE_SIZE`, "
              "2048 by default) is full: fewer spans than calls × spans per call means some were dropped.\n")

    if keys:
        w(f"## Chart\n\n![throughput and ratios]({os.path.relpath(a.chart, pathlib.Path(a.out).parent)})\n")
    w("## Errors\n")
    w("\n".join(f"- {e}" for e in errors) if errors else "None: every call of every workload returned the expected result.")
    w("")
    pathlib.Path(a.out).write_text("\n".join(out) + "\n")
    if keys:
        chart(a.chart, keys, thr, ratios)
    return 1 if errors else 0


def chart(path, keys, thr, ratios):
    """Two panels: throughput per server (log scale) and generated / hand-written per workload."""
    n = len(keys)
    row_h, left, width = 22, 300, 1100
    top1 = 60
    h1 = n * row_h
    top2 = top1 + h1 + 90
    h2 = n * row_h
    height = top2 + h2 + 50
    plot_w = width - left - 40
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="15" font-weight="bold">Throughput, calls/s (log scale), median of repetitions</text>']
    lo, hi = 10, 1_000_000

    def x_log(v):
        v = max(v, lo)
        return left + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    for i, s in enumerate(SERVERS):
        svg.append(f'<rect x="{left + i*170}" y="30" width="12" height="12" fill="{COLOR[s]}"/>'
                   f'<text x="{left + i*170 + 16}" y="40">{LABEL[s]}</text>')
    for d in range(1, 7):
        x = x_log(10 ** d)
        svg.append(f'<line x1="{x:.1f}" y1="{top1}" x2="{x:.1f}" y2="{top1+h1}" stroke="#ddd"/>'
                   f'<text x="{x:.1f}" y="{top1+h1+14}" text-anchor="middle">{10**d:,}</text>')
    for j, k in enumerate(keys):
        y = top1 + j * row_h
        svg.append(f'<text x="{left-6}" y="{y+14}" text-anchor="end">{wl_name(k)}</text>')
        for i, s in enumerate(SERVERS):
            v = med(thr(k, s))
            if not math.isnan(v):
                svg.append(f'<rect x="{left}" y="{y+2+i*4.5:.1f}" width="{x_log(v)-left:.1f}" height="4" fill="{COLOR[s]}"/>')
    svg.append(f'<text x="10" y="{top2-30}" font-size="15" font-weight="bold">generated / hand-written throughput '
               f'(bar: median, whisker: min–max of repetitions; red line: target 0.95)</text>')
    rmax = 1.5

    def x_lin(v):
        return left + plot_w * min(v, rmax) / rmax
    for t in (0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5):
        x = x_lin(t)
        svg.append(f'<line x1="{x:.1f}" y1="{top2}" x2="{x:.1f}" y2="{top2+h2}" stroke="#ddd"/>'
                   f'<text x="{x:.1f}" y="{top2+h2+14}" text-anchor="middle">{t:.2f}</text>')
    for j, k in enumerate(keys):
        y = top2 + j * row_h
        svg.append(f'<text x="{left-6}" y="{y+14}" text-anchor="end">{wl_name(k)}</text>')
        r = ratios(k, "generated", "handwritten")
        if r:
            m = med(r)
            color = "#1f77b4" if m >= 0.95 else "#d62728"
            svg.append(f'<rect x="{left}" y="{y+4}" width="{x_lin(m)-left:.1f}" height="12" fill="{color}"/>'
                       f'<line x1="{x_lin(min(r)):.1f}" y1="{y+10}" x2="{x_lin(max(r)):.1f}" y2="{y+10}" stroke="black"/>'
                       f'<text x="{x_lin(m)+4:.1f}" y="{y+14}">{m:.2f}</text>')
    x = x_lin(0.95)
    svg.append(f'<line x1="{x:.1f}" y1="{top2-5}" x2="{x:.1f}" y2="{top2+h2}" stroke="#d62728" stroke-dasharray="4,3"/>')
    svg.append("</svg>")
    pathlib.Path(path).write_text("\n".join(svg) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
