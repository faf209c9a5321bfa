#!/usr/bin/env python3
"""MCP client benchmark: sequential `tools/call` round trips per second against one local server.

Starts server-everything (Streamable HTTP, from .peers/) on a free loopback port and times N
sequential `echo` calls over one session with each client, after one warm-up call that connects:

- katari `mcp.call` (bench/mcp_client.kt, release build),
- katari minted tool through `reflection.call_agent` (same script, `minted=true`),
- bare rmcp, the library katari's client is built on (bench/mcp_client.rs),
- the Python SDK client (mcp 2.3.0, bench/mcp_client_py.py),
- the TypeScript SDK client (bench/mcp_client_ts.mjs).

Each client times its own loop (start-up and connecting excluded). Rounds alternate the clients;
the table shows the median and best calls/s and each client's median relative to bare rmcp
(target for katari: per-call cost within 1.5x of bare rmcp). The server is the same for all, so
its own cost is in every number.

Prints the table and records it in docs/benchmarks.md, section "MCP client" (other sections are
kept). Timings, never assertions.

Usage: bench/mcp_client.py [--calls N] [--rounds R] [--no-build] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = Path(os.environ.get("KATARI_PEERS", ROOT / ".peers"))
EVERYTHING = PEERS / "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SDK = PEERS / "npm/node_modules/@modelcontextprotocol/sdk"
PYTHON = PEERS / "py/bin/python"
KATARI = ROOT / "target/release/katari"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"the server did not listen on port {port}")


def measure(command: list[str]) -> tuple[int, float] | None:
    """Runs one client; returns (calls, milliseconds) or None when it failed."""
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    match = re.search(r"(\d+) ([0-9.]+)\s*$", out.stdout)
    if out.returncode != 0 or not match:
        print(f"WARNING: {' '.join(command[:3])} failed:\n{out.stdout}\n{out.stderr}", file=sys.stderr)
        return None
    return int(match.group(1)), float(match.group(2))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    opts = parser.parse_args()
    for needed in (EVERYTHING, SDK, PYTHON):
        if not needed.exists():
            sys.exit(f"{needed} is missing: run tests/peers/install.sh")
    if not opts.no_build:
        subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "katari"], cwd=ROOT, check=True)
        subprocess.run(
            ["cargo", "bench", "--quiet", "-p", "katari-runtime", "--bench", "mcp_client", "--no-run"],
            cwd=ROOT,
            check=True,
        )
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen(
        ["node", str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    n = str(opts.calls)
    clients = {
        "katari `mcp.call`": [str(KATARI), "run", "bench/mcp_client.kt", "-a", f"url={url}", "-a", f"n={n}"],
        "katari minted tool (`call_agent`)": [
            str(KATARI), "run", "bench/mcp_client.kt", "-a", f"url={url}", "-a", f"n={n}", "-a", "minted=true",
        ],
        "bare rmcp 3.11": [
            "cargo", "bench", "--quiet", "-p", "katari-runtime", "--bench", "mcp_client", "--", url, n,
        ],
        "Python SDK 2.3.0": [str(PYTHON), "bench/mcp_client_py.py", url, n],
        "TypeScript SDK": ["node", "bench/mcp_client_ts.mjs", str(SDK), url, n],
    }
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"
    rates: dict[str, list[float]] = {name: [] for name in clients}
    try:
        wait_for(port)
        for _ in range(opts.rounds):
            for name, command in clients.items():
                got = measure(command)
                if got:
                    calls, ms = got
                    rates[name].append(calls / (ms / 1000.0))
    finally:
        server.kill()
        server.wait()
    base = statistics.median(rates["bare rmcp 3.11"]) if rates["bare rmcp 3.11"] else None
    rows = ["| client | median calls/s | best calls/s | median ms/call | per-call cost vs bare rmcp |", "|---|---:|---:|---:|---:|"]
    for name, values in rates.items():
        if not values:
            rows.append(f"| {name} | WARNING: failed | | | |")
            continue
        med = statistics.median(values)
        ratio = f"{base / med:.2f}x" if base else "?"
        rows.append(f"| {name} | {med:.0f} | {max(values):.0f} | {1000 / med:.3f} | {ratio} |")
    table = "\n".join(rows)
    cpu = "?"
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit, dirty = "unknown", ""
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
    section = f"""## MCP client

Sequential `tools/call` round trips per second against one local server (server-everything's
`echo`, Streamable HTTP on loopback), one session per client, {opts.calls} calls per run after a
warm-up call that connects; each client times its own loop, so start-up and connecting are
excluded. The server's own cost is in every number. Target: katari's per-call cost within 1.5x of
a bare rmcp client's.

- Machine: {os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}
- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}, commit {commit}{", with uncommitted changes" if dirty else ""}; {rustc}
- Load average when the run started: {load} (other work on the machine slows the numbers)
- Command: `bench/mcp_client.py` ({opts.rounds} rounds, clients alternating; release builds)

{table}
"""
    print(table)
    if not opts.no_write:
        out = ROOT / "docs/benchmarks.md"
        text = out.read_text() if out.exists() else "# Benchmarks\n"
        kept: list[str] = []
        skip = False
        for line in text.splitlines():
            if line.startswith("## "):
                skip = line.strip() == "## MCP client"
            if not skip:
                kept.append(line)
        body = "\n".join(kept).rstrip("\n")
        out.write_text(f"{body}\n\n{section}")
        print(f"recorded in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
