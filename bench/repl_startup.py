#!/usr/bin/env python3
"""REPL start-up benchmark: time from starting `katari repl` to its first prompt.

Two measurements, each the median (and fastest) of RUNS runs of the release binary:

- terminal: `katari repl` on a pseudo-terminal; the clock stops when `kt> ` appears on the
  terminal (what a person waits for), then `.exit` is typed and the process reaped;
- piped: `printf '.exit\\n' | katari repl`, the whole process (start-up, one input, exit).

Each run gets a fresh KATARI_HOME (no configuration, empty history), so no user state counts.
Target (issue #6): under 50 ms to the first prompt.

Prints a table and records it in docs/benchmarks.md, section "REPL" (other sections are kept).
Timings, never assertions: exits 0 whatever the numbers are.

Usage: bench/repl_startup.py [--runs N] [--no-build] [--no-write] [--katari PATH]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import pty
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
TARGET_MS = 50.0


def to_prompt(katari: str, home: Path) -> float:
    """Seconds from spawning `katari repl` on a pty until `kt> ` shows."""
    env = dict(os.environ, KATARI_HOME=str(home), NO_COLOR="1", TERM="xterm")
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(home)
        os.execve(katari, [katari, "repl"], env)
    seen = b""
    elapsed = None
    deadline = start + 30
    try:
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if b"kt> " in seen:
                elapsed = time.perf_counter() - start
                break
        os.write(fd, b".exit\r")
        end = time.perf_counter() + 10
        while time.perf_counter() < end:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    if not os.read(fd, 4096):
                        break
                except OSError:
                    break
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                pid = 0
                break
    finally:
        if pid:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
        os.close(fd)
    if elapsed is None:
        raise RuntimeError(f"no prompt; the terminal showed {seen[-300:]!r}")
    return elapsed


def piped(katari: str, home: Path) -> float:
    env = dict(os.environ, KATARI_HOME=str(home), NO_COLOR="1")
    start = time.perf_counter()
    out = subprocess.run(
        [katari, "repl"], input=b".exit\n", env=env, cwd=home, capture_output=True
    )
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"katari repl exited {out.returncode}: {out.stderr.decode()}")
    return elapsed


def measure(fn, katari: str, runs: int) -> tuple[float, float]:
    times = []
    for i in range(runs + 1):
        home = Path(tempfile.mkdtemp(prefix="katari-repl-bench-"))
        try:
            t = fn(katari, home)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        if i > 0:  # the first run warms the page cache
            times.append(t * 1000)
    return statistics.median(times), min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--katari", default=str(ROOT / "target" / "release" / "katari"))
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "katari"], cwd=ROOT, check=True)
    load = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    rows = []
    for name, fn in [("terminal: to the first `kt> `", to_prompt), ("piped: `.exit`, whole process", piped)]:
        median, best = measure(fn, args.katari, args.runs)
        rows.append((name, median, best))
    table = ["| measurement | median | fastest | target |", "|---|---:|---:|---:|"]
    for name, median, best in rows:
        table.append(f"| {name} | {median:.1f} ms | {best:.1f} ms | < {TARGET_MS:.0f} ms |")
    table_text = "\n".join(table)
    print(table_text)
    if args.no_write:
        return 0
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit, dirty = "unknown", ""
    cpu = next(
        (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
        platform.processor(),
    )
    section = f"""## REPL

Start-up of `katari repl` (release build): the time to the first prompt on a pseudo-terminal,
and a whole piped session of one `.exit`. Each run has a fresh `KATARI_HOME` (no configuration,
no history). Median and fastest of {args.runs} runs after one warm-up. Target: under 50 ms to the
first prompt.

- Machine: {os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}
- Date: {datetime.date.today().isoformat()}, commit {commit}{", with uncommitted changes" if dirty else ""}
- Load average when the run started: {" ".join(load)} (other work on the machine slows the numbers)
- Command: `python3 bench/repl_startup.py`

{table_text}
"""
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    # Keep a hand-written "### ..." subsection of the REPL section, if any.
    match = re.search(r"^## REPL\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M)
    if match:
        kept = re.search(r"^### .*", match.group(1), flags=re.S | re.M)
        if kept:
            section += "\n" + kept.group(0).rstrip() + "\n"
        text = text[: match.start()] + section + "\n" + text[match.end():].lstrip("\n")
    else:
        text = text.rstrip() + "\n\n" + section
    DOC.write_text(text.rstrip() + "\n")
    print(f"recorded in {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
