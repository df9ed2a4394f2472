"""A fleet of the fleet example (generated-examples/fleet) exactly as its README's "Running more
than one replica" section deploys it: three replicas started by the section's first `sh` block,
real nginx with the section's `nginx` block, real Redis as the bus, and the key-rotation `sh`
blocks run as they are.

The blocks are taken from generated-examples/fleet/README.md by info string and run after one
fixed substitution table (`SUBSTITUTIONS`), each entry asserted to occur in the section: the
loopback ports become free ones, the `/etc`, `/run` and `/var/log` folders temporary ones,
`target/release/fleet` the built binary, and the retire step's wait (`sleep 660`: the default
600 s state lifetime plus 60 s for clocks that differ between machines) the test's lifetime plus
one second (`MCP_REQUEST_STATE_TTL_SECS=5` in the environment the blocks run in; one machine has
one clock). So an edit of the README that breaks the deployment breaks the tests.

nginx (`/usr/sbin/nginx`) and Redis (`/usr/bin/redis-server`) are Debian's packages
(`scripts/debian-packages.txt`, installed by `scripts/setup-system.sh`); without them the tests
fail, saying so. nginx runs as one process (`master_process off`, `daemon off`) with a main
configuration in the temporary folder that includes the README's block; Redis runs on a free
loopback port without persistence. Everything is stopped by pid at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT, binary, free_port

README = ROOT / "generated-examples" / "fleet" / "README.md"
SECTION = "## Running more than one replica"
REPLICAS = ("r1", "r2", "r3")
README_PORTS = {"r1": 8001, "r2": 8002, "r3": 8003}
TTL_SECS = 5
START_TIMEOUT = 15.0


def section_blocks() -> list[tuple[str, str]]:
    """The fenced blocks of the README's replica section, as (info string, body), in order."""
    text = README.read_text()
    start = text.index(SECTION + "\n")
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:] if end == -1 else text[start:end]
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", section, re.M | re.S)]


def tool(name: str) -> Path:
    for path in (f"/usr/sbin/{name}", f"/usr/bin/{name}", f"/usr/local/bin/{name}", f"/usr/local/sbin/{name}"):
        if os.access(path, os.X_OK):
            return Path(path)
    found = shutil.which(name)
    assert found, (f"{name} is not installed: scripts/setup-system.sh installs it from "
                   "scripts/debian-packages.txt (nginx-light, redis-server)")
    return Path(found)


def wait_port(port: int, timeout: float = START_TIMEOUT, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert proc is None or proc.poll() is None, f"the process for port {port} exited ({proc.returncode})"
        time.sleep(0.02)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def wait_closed(port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.02)
    raise AssertionError(f"127.0.0.1:{port} still listens after {timeout} s")


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.05)


@dataclass
class AccessEntry:
    method: str
    status: int
    session: str  # "-" without Mcp-Session-Id
    upstreams: list[str]  # every address nginx tried, in order ("127.0.0.1:P")


class Fleet:
    """Three replicas, nginx and Redis, started from the README's blocks."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mcpgen-fleet-"))
        self.ports = {r: free_port() for r in REPLICAS}
        self.nginx_port = free_port()
        self.redis_port = free_port()
        self.binary = binary("fleet")
        self.substitutions = [
            *((f"127.0.0.1:{README_PORTS[r]}", f"127.0.0.1:{self.ports[r]}") for r in REPLICAS),
            ("127.0.0.1:8080", f"127.0.0.1:{self.nginx_port}"),
            ("127.0.0.1:6379", f"127.0.0.1:{self.redis_port}"),
            ("/etc/fleet", str(self.dir / "etc")),
            ("/run/fleet", str(self.dir / "run")),
            ("/var/log/fleet", str(self.dir / "log")),
            ("target/release/fleet", str(self.binary)),
            ("sleep 660", f"sleep {TTL_SECS + 1}"),
        ]
        blocks = section_blocks()
        assert [info for info, _ in blocks] == ["sh", "nginx", "sh", "sh", "sh"], blocks
        section = "".join(body for _, body in blocks)
        for old, _new in self.substitutions:
            assert old in section, f"the README's replica section no longer contains {old!r}"
        self.blocks = [(info, self.substitute(body)) for info, body in blocks]
        self.launch, self.nginx_conf, self.add_key, self.promote_key, self.retire_key = (b for _, b in self.blocks)
        self.redis: subprocess.Popen | None = None
        self.nginx: subprocess.Popen | None = None
        self.env = dict(os.environ, MCP_REQUEST_STATE_TTL_SECS=str(TTL_SECS))
        for name in ("MCP_REQUEST_STATE_KEYS", "MCP_REPLICA", "MCP_BUS", "MCP_BUS_CHANNEL"):
            self.env.pop(name, None)

    def substitute(self, text: str) -> str:
        for old, new in self.substitutions:
            text = text.replace(old, new)
        return text

    # --- the parts ---------------------------------------------------------------------------

    def start(self) -> None:
        self.start_redis()
        self.sh(self.launch)
        for r in REPLICAS:
            self.wait_replica(r, 1)
        self.start_nginx()

    def sh(self, script: str) -> None:
        """Runs a block with `sh -e` (the replicas it starts outlive it)."""
        with open(self.dir / "sh.out", "ab") as out:
            done = subprocess.run(["sh", "-ec", script], env=self.env, stdin=subprocess.DEVNULL,
                                  stdout=out, stderr=out, timeout=60)
        assert done.returncode == 0, f"{script}\nexit {done.returncode}: {(self.dir / 'sh.out').read_text()}"

    def start_redis(self) -> None:
        (self.dir / "redis").mkdir(exist_ok=True)
        self.redis = subprocess.Popen(
            [str(tool("redis-server")), "--bind", "127.0.0.1", "--port", str(self.redis_port), "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--dir", str(self.dir / "redis")],
            stdin=subprocess.DEVNULL, stdout=open(self.dir / "redis.log", "ab"), stderr=subprocess.STDOUT,
        )
        wait_port(self.redis_port, proc=self.redis)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with socket.create_connection(("127.0.0.1", self.redis_port), timeout=2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64) == b"+PONG\r\n":
                    return
            assert time.monotonic() < deadline, "Redis does not answer PING"
            time.sleep(0.05)

    def stop_redis(self) -> None:
        assert self.redis is not None
        self.redis.kill()
        self.redis.wait(10)
        self.redis = None
        wait_closed(self.redis_port)

    def start_nginx(self) -> None:
        (self.dir / "fleet.conf").write_text(self.nginx_conf)
        d = self.dir
        main = f"""master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format fleet '$request_method|$status|$http_mcp_session_id|$upstream_addr';
    access_log {d}/access.log fleet;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    include {d}/fleet.conf;
}}
"""
        (d / "nginx.conf").write_text(main)
        self.nginx = subprocess.Popen(
            [str(tool("nginx")), "-p", str(d), "-c", str(d / "nginx.conf"), "-e", str(d / "nginx-error.log"),
             "-g", "daemon off;"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(d / "nginx.out", "ab"),
        )
        try:
            wait_port(self.nginx_port, proc=self.nginx)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{(d / 'nginx-error.log').read_text() if (d / 'nginx-error.log').exists() else ''}"
                                 f"{(d / 'nginx.out').read_text()}") from None

    # --- replicas ----------------------------------------------------------------------------

    def pid(self, replica: str) -> int:
        return int((self.dir / "run" / f"{replica}.pid").read_text())

    def log(self, replica: str) -> str:
        path = self.dir / "log" / f"{replica}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def count(self, replica: str, needle: str) -> int:
        return sum(needle in line for line in self.log(replica).splitlines())

    def subscribed_line(self) -> str:
        return f"bus: subscribed to 'mcpgen:Fleet:changes' at 127.0.0.1:{self.redis_port}"

    def wait_replica(self, replica: str, starts: int) -> None:
        """Waits until the replica listens and has subscribed to the bus for the `starts`-th time."""
        wait_port(self.ports[replica])
        wait_for(lambda: self.count(replica, self.subscribed_line()) >= starts, START_TIMEOUT,
                 f"{replica}'s subscription ({self.log(replica)})")
        assert self.count(replica, f"replica '{replica}': legacy session ids start with '{replica}.'") == starts, \
            self.log(replica)

    def kill(self, replica: str) -> None:
        os.kill(self.pid(replica), signal.SIGKILL)
        wait_closed(self.ports[replica])

    def restart(self, replica: str) -> None:
        """Runs the launch block's lines for this replica again: its `export` and its own line."""
        lines = self.launch.splitlines()
        script = "\n".join(
            [line for line in lines if line.startswith("export ")]
            + [line for line in lines if f"--replica {replica} " in line])
        assert script.count("--replica") == 1, script
        starts = self.count(replica, self.subscribed_line())
        self.sh(script)
        self.wait_replica(replica, starts + 1)

    def url(self, replica: str | None = None) -> str:
        """nginx's URL, or one replica's own."""
        port = self.nginx_port if replica is None else self.ports[replica]
        return f"http://127.0.0.1:{port}/mcp"

    def replica_of_port(self, address: str) -> str:
        return {f"127.0.0.1:{p}": r for r, p in self.ports.items()}[address]

    def access(self) -> list[AccessEntry]:
        path = self.dir / "access.log"
        entries = []
        for line in (path.read_text().splitlines() if path.exists() else []):
            method, status, session, upstreams = line.split("|")
            entries.append(AccessEntry(method, int(status), session, [u.strip() for u in upstreams.split(",")]))
        return entries

    def close(self) -> None:
        for r in REPLICAS:
            try:
                os.kill(self.pid(r), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        for proc in (self.nginx, self.redis):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        if os.environ.get("MCPGEN_FLEET_KEEP") is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print(f"fleet: kept {self.dir}")
