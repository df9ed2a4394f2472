#!/usr/bin/env python3
"""The generator's part of the bench: `mcpgen new` / `mcpgen generate` times for synthetic
specs (bench/make_specs.py), and clean and incremental `cargo build` times of the generated
crates. Writes one JSON document.

genbench.py --mcpgen BIN --work DIR --out FILE [--reps N] [--sizes 10,100,1000]
            [--build-sizes 10,100] [--lock Cargo.lock] [--bookshop SPEC]
Clean builds use a fresh CARGO_TARGET_DIR per crate (dependencies included, debug profile as
in the README's `cargo build`; the smallest also without the feature `telemetry`); the incremental build follows a one-tool spec change and
`mcpgen generate`. With --bookshop, the crate `mcpgen new` writes from that spec (the README's
first command): its clean debug build, its rebuild after a one-line edit of `src/handlers.rs`,
its clean release build, and the packages it locks and compiles. Every step has a timeout; a
failure is recorded and ends with exit 1.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_specs  # noqa: E402


def timed(cmd, cwd=None, env=None, timeout=900, log=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    dt = time.perf_counter() - t
    if log:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}  ({dt:.2f} s, exit {p.returncode})\n{p.stdout[-4000:]}\n")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({p.returncode}): {p.stdout[-2000:]}")
    return dt


def touch_spec(crate: pathlib.Path, k: int):
    """Changes one tool's description in the crate's recorded spec."""
    path = crate / "spec.json"
    spec = json.loads(path.read_text())
    first = next(iter(spec["tools"]))
    spec["tools"][first]["description"] = f"Changed for the incremental bench, round {k}."
    path.write_text(json.dumps(spec, indent=2) + "\n")


def count_packages(crate: pathlib.Path, env) -> dict:
    """The packages in the crate's Cargo.lock (every target's, as cargo locks them) and those its
    normal build compiles on this machine (`cargo tree`, build dependencies included)."""
    locked = (crate / "Cargo.lock").read_text().count("\n[[package]]\n")
    tree = subprocess.run(["cargo", "tree", "--offline", "-e", "normal,build", "--prefix", "none",
                           "--format", "{p}"], cwd=crate, env=env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    compiled = {tuple(line.split()[:2]) for line in tree.splitlines() if line.strip()}
    names = {name for name, _ in compiled}
    return {"locked": locked, "compiled": len(compiled),
            "jwt": "jsonwebtoken" in names, "redis": "redis" in names}


def bookshop(mcpgen: str, spec: str, work: pathlib.Path, lock, log) -> dict:
    """The README's first command as a benchmark: `new` from SPEC, then its builds."""
    crate = work / "bookshop"
    target = work / "target-bookshop"
    env = dict(os.environ, CARGO_TARGET_DIR=str(target), CARGO_TERM_COLOR="never")
    row = {"spec": spec}
    timed([mcpgen, "new", "bookshop", "--spec", spec, "--dir", str(crate)], log=log)
    if lock:
        # The examples' versions (nothing new to download); the build drops what it does not use.
        shutil.copy(lock, crate / "Cargo.lock")
    row["clean_debug_s"] = timed(["cargo", "build", "--offline"], cwd=crate, env=env, timeout=1500, log=log)
    row.update(count_packages(crate, env))
    handlers = crate / "src" / "handlers.rs"
    text = handlers.read_text()
    handlers.write_text(text.replace("\n", "\n// One line edited by the bench.\n", 1))
    row["handlers_edit_s"] = timed(["cargo", "build", "--offline"], cwd=crate, env=env, log=log)
    row["clean_release_s"] = timed(["cargo", "build", "--offline", "--release"], cwd=crate, env=env,
                                   timeout=2400, log=log)
    shutil.rmtree(target, ignore_errors=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcpgen", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--build-sizes", default="10,100")
    ap.add_argument("--lock", default=None)
    ap.add_argument("--bookshop", default=None)
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "genbench.log"
    mcpgen = str(pathlib.Path(a.mcpgen).resolve())
    sizes = [int(s) for s in a.sizes.split(",") if s]
    build_sizes = [int(s) for s in a.build_sizes.split(",") if s]
    result = {"generate": [], "build": [], "bookshop": None, "errors": []}
    for n in sizes:
        spec_path = work / f"tools-{n}.json"
        text = json.dumps(make_specs.spec(n), indent=2) + "\n"
        spec_path.write_text(text)
        row = {"tools": n, "spec_bytes": len(text),
               "resolvers": len(make_specs.spec(n)["resolvers"]), "check_s": [], "new_s": [], "generate_s": []}
        try:
            for r in range(a.reps):
                row["check_s"].append(timed([mcpgen, "check", str(spec_path)], log=log))
                crate = work / f"crate-{n}-{r}"
                row["new_s"].append(timed([mcpgen, "new", f"synthetic{n}", "--spec", str(spec_path),
                                           "--dir", str(crate)], log=log))
                touch_spec(crate, r)
                row["generate_s"].append(timed([mcpgen, "generate", "--crate", str(crate)], log=log))
                if r > 0:
                    shutil.rmtree(crate, ignore_errors=True)
            row["lines"] = sum(len(p.read_text().splitlines())
                               for p in (work / f"crate-{n}-0" / "src").rglob("*.rs"))
        except Exception as e:  # noqa: BLE001
            result["errors"].append(f"generate {n}: {e}")
        for k in ("check_s", "new_s", "generate_s"):
            row[k.replace("_s", "_median_s")] = statistics.median(row[k]) if row[k] else None
        result["generate"].append(row)
        print(f"generate {n:>5} tools: check {row['check_median_s']}, new {row['new_median_s']}, "
              f"generate {row['generate_median_s']} s", file=sys.stderr, flush=True)
    for n in build_sizes:
        crate = work / f"crate-{n}-0"
        target = work / f"target-{n}"
        env = dict(os.environ, CARGO_TARGET_DIR=str(target), CARGO_TERM_COLOR="never")
        row = {"tools": n}
        try:
            if a.lock:
                shutil.copy(a.lock, crate / "Cargo.lock")
            row["clean_s"] = timed(["cargo", "build", "--offline"], cwd=crate, env=env, timeout=1500, log=log)
            if n == build_sizes[0]:
                # The same clean build without the default feature `telemetry`.
                bare = dict(env, CARGO_TARGET_DIR=str(work / f"target-{n}-without-telemetry"))
                row["clean_without_telemetry_s"] = timed(
                    ["cargo", "build", "--offline", "--no-default-features"], cwd=crate, env=bare,
                    timeout=1500, log=log)
                shutil.rmtree(bare["CARGO_TARGET_DIR"], ignore_errors=True)
            # No-op rebuild, then a one-tool spec change regenerated and rebuilt.
            row["noop_s"] = timed(["cargo", "build", "--offline"], cwd=crate, env=env, log=log)
            touch_spec(crate, 99)
            t = time.perf_counter()
            timed([mcpgen, "generate", "--crate", str(crate)], log=log)
            timed(["cargo", "build", "--offline"], cwd=crate, env=env, timeout=900, log=log)
            row["incremental_s"] = time.perf_counter() - t
            with open(crate / "src" / "handlers.rs", "a") as f:
                f.write("\n// touched by the bench\n")
            row["handlers_edit_s"] = timed(["cargo", "build", "--offline"], cwd=crate, env=env, log=log)
        except Exception as e:  # noqa: BLE001
            result["errors"].append(f"build {n}: {e}")
        shutil.rmtree(target, ignore_errors=True)
        result["build"].append(row)
        print(f"build {n:>5} tools: {row}", file=sys.stderr, flush=True)
    if a.bookshop:
        try:
            result["bookshop"] = bookshop(mcpgen, str(pathlib.Path(a.bookshop).resolve()), work, a.lock, log)
        except Exception as e:  # noqa: BLE001
            result["errors"].append(f"bookshop: {e}")
        print(f"bookshop: {result['bookshop']}", file=sys.stderr, flush=True)
    pathlib.Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(1 if result["errors"] else 0)


if __name__ == "__main__":
    main()
