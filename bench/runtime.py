#!/usr/bin/env python3
"""Runtime benchmarks: katari programs against equivalent CPython programs.

Runs every bench/runtime/NAME.kt with `katari run` (release build) and bench/runtime/NAME.py with
the real CPython binary (`-S`, no site import), side by side in the same run: one warm-up run of
each, then RUNS timed runs alternating katari and CPython. Reports the median and fastest wall
time of each, the CPU time (user + system, which exceeds the wall time when a program uses
several cores), the ratio katari/CPython of the medians, and their geometric mean; plus the
start-up cost (`katari run hello.kt` against `python3 -S -c pass`). Every katari program must
print exactly what its CPython twin prints; a mismatch (or a failed run) shows as a WARNING row
and is left out of the geometric mean.

Prints the table and records it in docs/benchmarks.md, section "Runtime" (the other sections, and
the hand-written subsections of "Runtime" from "### Where the time goes" on, with its history
table, are kept).

Timings, never assertions: this script exits 0 whatever the numbers are (non-zero only when it
cannot run at all). Run it on a quiet machine; the load average is recorded with the results.

Usage: bench/runtime.py [--runs N] [--quick] [--no-build] [--no-write] [--katari PATH]
       [--python PATH] [--only NAME[,NAME...]]
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "runtime"
DOC = ROOT / "docs" / "benchmarks.md"

# Targets from the runtime issue.
TARGET_GEOMEAN = 0.5
TARGET_HELLO_MS = 10.0


@dataclass
class Program:
    name: str
    what: str
    n: int
    # Work size for --quick (a smoke run of the script itself, not a measurement).
    quick_n: int


PROGRAMS = [
    Program("fib", "recursive agent calls: naive `fib(n)`", 29, 15),
    Program("loop", "`for` over `array.range` with `var` state and `next ... with`", 3_000_000, 1_000),
    Program("strings", "`++`, templates, `string.to_string`, `string.join`", 500_000, 1_000),
    Program("shapes", "data constructors, `match` on constructors, records, field access", 100_000, 1_000),
    Program("handlers", "requests answered by a stateful `use handler` clause (CPython: a method call)", 500_000, 1_000),
    Program("parallel", "`parallel for` map, 1000-step state loop per element (CPython: sequential `sum`)", 1_500, 10),
]


@dataclass
class Sample:
    wall: float  # seconds
    cpu: float  # seconds, user + system
    rss_kb: int


@dataclass
class Result:
    name: str
    what: str
    n: int | None
    katari: list[Sample] = field(default_factory=list)
    python: list[Sample] = field(default_factory=list)
    problem: str | None = None
    output: str = ""


def run_once(cmd: list[str], cwd: Path) -> tuple[Sample, int, str, str]:
    """Runs `cmd`, returning its timing, exit code, stdout and stderr."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    sample = Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
    return sample, proc.returncode, out.decode("utf-8", "replace"), stderr


def median_ms(samples: list[Sample], key=lambda s: s.wall) -> float:
    return statistics.median(key(s) for s in samples) * 1000.0


def min_ms(samples: list[Sample]) -> float:
    return min(s.wall for s in samples) * 1000.0


def resolve_python(explicit: str | None) -> str:
    if explicit:
        return explicit
    # `python3` may be a version-manager shim (tens of milliseconds per start): time the real binary.
    out = subprocess.run(
        ["python3", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def bench_pair(name: str, what: str, n: int | None, kt_cmd: list[str], py_cmd: list[str], runs: int,
               compare_output: bool, expected_kt: str | None = None) -> Result:
    res = Result(name, what, n)
    # Warm-up (page cache, CPU frequency); also the correctness check.
    k, kcode, kout, kerr = run_once(kt_cmd, BENCH)
    p, pcode, pout, perr = run_once(py_cmd, BENCH)
    if kcode != 0:
        res.problem = f"katari exited {kcode}: {kerr.strip().splitlines()[0] if kerr.strip() else ''}"
    elif pcode != 0:
        res.problem = f"python exited {pcode}: {perr.strip().splitlines()[-1] if perr.strip() else ''}"
    elif compare_output and kout != pout:
        res.problem = f"outputs differ: katari {kout.strip()[:60]!r}, python {pout.strip()[:60]!r}"
    elif expected_kt is not None and kout.strip() != expected_kt:
        res.problem = f"katari printed {kout.strip()[:60]!r}"
    res.output = kout.strip()
    if res.problem:
        return res
    for i in range(runs):
        # Alternate which one goes first so that slow drifts of the machine hit both alike.
        order = [(kt_cmd, res.katari), (py_cmd, res.python)]
        if i % 2:
            order.reverse()
        for cmd, into in order:
            s, code, out, err = run_once(cmd, BENCH)
            if code != 0:
                res.problem = f"{cmd[0]} exited {code} on a timed run: {err.strip()[:80]}"
                return res
            into.append(s)
    return res


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_desc() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
        return commit + (", with uncommitted changes" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt(x: float) -> str:
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def render(results: list[Result], hello: Result, runs: int, meta: dict[str, str]) -> tuple[str, str]:
    """The console table and the markdown section."""
    rows = []
    ratios = []
    for r in results:
        if r.problem:
            rows.append(f"| {r.name} | {r.what} | {r.n:,} | WARNING: {r.problem} | | | | | | | |")
            continue
        km, pm = median_ms(r.katari), median_ms(r.python)
        ratio = km / pm
        ratios.append(ratio)
        kcpu = median_ms(r.katari, key=lambda s: s.cpu)
        pcpu = median_ms(r.python, key=lambda s: s.cpu)
        rss = max(s.rss_kb for s in r.katari) / 1024
        rows.append(
            f"| {r.name} | {r.what} | {r.n:,} | {fmt(km)} | {fmt(pm)} | **{ratio:.2f}** | {fmt(min_ms(r.katari))} | "
            f"{fmt(min_ms(r.python))} | {fmt(kcpu)} | {fmt(pcpu)} | {rss:.0f} |"
        )
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else float("nan")
    header = (
        "| program | exercises | n | katari median ms | CPython median ms | katari / CPython | katari min ms | "
        "CPython min ms | katari CPU ms | CPython CPU ms | katari max RSS MB |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    table = header + "\n" + "\n".join(rows)
    complete = len(ratios) == len(results)
    geo_line = (
        f"Geometric mean of katari / CPython over {len(ratios)} program{'s' if len(ratios) != 1 else ''}"
        f"{'' if complete else ' (programs with a WARNING left out)'}: **{geo:.2f}** "
        f"(target ≤ {TARGET_GEOMEAN}: {'met' if geo <= TARGET_GEOMEAN else 'missed'})."
    )
    if hello.problem:
        hello_line = f"Start-up: WARNING: {hello.problem}"
    else:
        hk, hp = median_ms(hello.katari), median_ms(hello.python)
        hello_line = (
            f"Start-up: `katari run hello.kt` median **{hk:.1f} ms** (min {min_ms(hello.katari):.1f}, "
            f"max RSS {max(s.rss_kb for s in hello.katari) / 1024:.0f} MB) against `python3 -S -c pass` "
            f"{hp:.1f} ms (min {min_ms(hello.python):.1f}); ratio {hk / hp:.2f} "
            f"(target ≤ {TARGET_HELLO_MS:.0f} ms: {'met' if hk <= TARGET_HELLO_MS else 'missed'})."
        )
    console = f"{table}\n\n{geo_line}\n{hello_line}\n"
    section = f"""## Runtime

Whole-process wall time of `katari run` (release build) on the programs in `bench/runtime/*.kt`
against equivalent CPython programs (`bench/runtime/*.py`), each pair timed side by side in the
same run. Each katari program prints exactly what its CPython twin prints (checked on every run of
the script; a mismatch shows as a WARNING row). Times include start-up (loading and checking the
program and the prelude for katari, interpreter start for CPython) because that is what a user
waits for. Targets (runtime issue): geometric mean of katari / CPython ≤ {TARGET_GEOMEAN}, hello
≤ {TARGET_HELLO_MS:.0f} ms.

- Machine: {meta['nproc']} cores, {meta['cpu']}, {meta['kernel']}
- Date: {meta['date']}, commit {meta['commit']}; {meta['rustc']}
- CPython: {meta['python_version']} (`{meta['python']} -S`, the real binary, not a version-manager shim)
- Load average at start / end: {meta['load_start']} / {meta['load_end']} (other work on the machine slows the numbers)
- Command: `bench/runtime.py` ({runs} timed runs per program and language after one warm-up run,
  alternating katari and CPython; median and fastest wall time; CPU time is user + system, above
  the wall time when several cores work)
- Each CPython twin is the program a Python programmer would write for the same output: the
  handler program's `var` state is an attribute of a plain object and its clause a method
  (`counter.tick()`); `shapes` prints its dict with `json.dumps`. The twin of `parallel.kt` is
  a sequential `sum` over a generator: under the GIL a `ThreadPoolExecutor` cannot run
  CPU-bound Python in parallel and only adds overhead.

{table}

{geo_line}

{hello_line}
"""
    return console, section


def write_doc(section: str) -> None:
    DOC.parent.mkdir(parents=True, exist_ok=True)
    if DOC.exists():
        text = DOC.read_text()
    else:
        text = (
            "# Benchmarks\n\nResults recorded by the scripts under bench/. Timings, never assertions: they vary "
            "with\nthe machine and its load.\n"
        )
    lines = text.splitlines(keepends=True)
    # Find the "## Runtime" section: it ends at the next "## " heading. Inside it, the
    # "### Where the time goes" subsection (written by hand from profiles) is kept.
    start = next((i for i, l in enumerate(lines) if l.rstrip("\n") == "## Runtime"), None)
    kept = ""
    if start is None:
        before, after = text.rstrip("\n") + "\n\n", ""
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        body = lines[start:end]
        where = next((i for i, l in enumerate(body) if l.rstrip("\n") == "### Where the time goes"), None)
        if where is not None:
            kept = "".join(body[where:]).rstrip("\n") + "\n"
        before = "".join(lines[:start])
        after = "".join(lines[end:])
    new = before + section.rstrip("\n") + "\n" + ("\n" + kept if kept else "") + ("\n" + after if after else "")
    DOC.write_text(new)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="timed runs per program and language (default 7)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and 1 run: checks the script, measures nothing; implies --no-write")
    ap.add_argument("--no-build", action="store_true", help="do not run `cargo build --release -p katari` first")
    ap.add_argument("--no-write", action="store_true", help="print the table only, leave docs/benchmarks.md alone")
    ap.add_argument("--katari", help="katari binary (default target/release/katari)")
    ap.add_argument("--python", help="CPython binary (default: sys.executable of `python3`)")
    ap.add_argument("--only", help="comma-separated program names")
    args = ap.parse_args()

    runs = 1 if args.quick else args.runs
    katari = Path(args.katari) if args.katari else ROOT / "target" / "release" / "katari"
    if not args.no_build and not args.katari:
        print("building: cargo build --release -p katari", file=sys.stderr)
        if subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "katari"], cwd=ROOT).returncode != 0:
            print("error: the release build failed (retry when the tree builds, or pass --no-build)", file=sys.stderr)
            return 2
    if not katari.exists():
        print(f"error: no katari binary at {katari}", file=sys.stderr)
        return 2
    katari = katari.resolve()
    python = resolve_python(args.python)
    python_version = subprocess.run([python, "-S", "-c", "import sys; print(sys.version.split()[0])"],
                                    capture_output=True, text=True).stdout.strip()
    rustc = shutil.which("rustc")
    meta = {
        "nproc": str(os.cpu_count()),
        "cpu": cpu_model(),
        "kernel": f"{platform.system()} {platform.release()}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "commit": git_desc(),
        "rustc": subprocess.run([rustc, "-V"], capture_output=True, text=True).stdout.strip() if rustc else "rustc unknown",
        "python": python,
        "python_version": python_version,
        "load_start": load_average(),
    }
    print(f"katari: {katari}\nCPython: {python} ({python_version})\nload average: {meta['load_start']}", file=sys.stderr)

    selected = PROGRAMS
    if args.only:
        names = set(args.only.split(","))
        selected = [p for p in PROGRAMS if p.name in names]
    results = []
    for p in selected:
        n = p.quick_n if args.quick else p.n
        print(f"  {p.name} (n = {n}) …", file=sys.stderr, flush=True)
        kt = [str(katari), "run", f"{p.name}.kt", "-a", f"n={n}"]
        py = [python, "-S", f"{p.name}.py", str(n)]
        results.append(bench_pair(p.name, p.what, n, kt, py, runs, compare_output=True))
    print("  hello …", file=sys.stderr, flush=True)
    hello = bench_pair("hello", "start-up", None, [str(katari), "run", "hello.kt"], [python, "-S", "-c", "pass"],
                       max(runs, 3) * (1 if args.quick else 3), compare_output=False, expected_kt="hello, katari")
    meta["load_end"] = load_average()

    console, section = render(results, hello, runs, meta)
    print()
    print(console)
    if not (args.no_write or args.quick):
        write_doc(section)
        print(f"recorded in {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
