"""Serves the local test LLM: llama.cpp's OpenAI-compatible server (the xllamacpp wheel) with
Qwen2.5-Coder-0.5B-Instruct Q4_K_M and the tool-call chat template beside this file, on
127.0.0.1 only. See docs/local-llm.md.

Run it with the Python of the virtual environment that tests/peers/install.sh makes:

    .peers/llm/bin/python tests/llm/serve.py [--port N] [--ctx N] [--threads N] ...

When the server answers its health check it prints exactly one line on stdout,

    listening http://127.0.0.1:PORT/v1

and then serves until SIGTERM or SIGINT (or, with --watch-stdin, until its standard input
closes, so a test that dies cannot leave it running). Port 0, the default, lets the system pick
a free port. It exits 0 after a clean stop, 1 when the server cannot start.
"""

import argparse
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# The model name the server reports in /v1/models and in every reply.
MODEL_NAME = "qwen2.5-coder-0.5b-instruct"


def peers_dir() -> Path:
    value = os.environ.get("KATARI_PEERS")
    return Path(value) if value else ROOT / ".peers"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: pick a free one)")
    parser.add_argument("--model", type=Path, default=peers_dir() / "llm" / MODEL_FILE)
    parser.add_argument("--template", type=Path, default=HERE / "qwen-tools.jinja")
    parser.add_argument("--ctx", type=int, default=8192, help="context size in tokens")
    parser.add_argument(
        "--threads",
        default="auto",
        help="CPU threads, or 'auto' (the default): 2, or 1 while the load average shows other work",
    )
    parser.add_argument("--ready-timeout", type=float, default=120.0, help="seconds to wait for health")
    parser.add_argument("--watch-stdin", action="store_true", help="stop when stdin reaches its end")
    parser.add_argument("--verbose", action="store_true", help="llama.cpp's informational log on stderr")
    return parser.parse_args(argv)


def fail(message: str) -> NoReturn:
    print(f"serve.py: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def thread_count(value: str) -> int:
    """The --threads value. Two threads on two cores are twice as fast as one on an idle
    machine, but several times slower than one while other work keeps a core busy (each step
    waits for the slower thread), so 'auto' takes one thread then."""
    if value != "auto":
        try:
            threads = int(value)
        except ValueError:
            fail(f"--threads {value!r} is neither a number nor 'auto'")
        if threads < 1:
            fail(f"--threads {threads} is less than 1")
        return threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = min(2, cores)
    if os.getloadavg()[0] > cores - threads + 0.5:
        threads = 1
    return threads


def wait_healthy(base: str, timeout: float) -> None:
    """Polls GET /health until it answers 200 (it says 503 while the model loads)."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as response:
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except urllib.error.HTTPError as e:
            last = f"HTTP {e.code}"
        except OSError as e:
            last = str(e)
        time.sleep(0.1)
    fail(f"{base}/health did not answer 200 within {timeout:.0f} s (last: {last})")


def main(argv) -> int:
    args = parse_args(argv)
    if not args.model.is_file():
        fail(f"model {args.model} is missing: run tests/peers/install.sh --llm")
    if not args.template.is_file():
        fail(f"chat template {args.template} is missing")
    if not 0 <= args.port <= 65535:
        fail(f"--port {args.port} is not a port")
    threads = thread_count(args.threads)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.chat_template = args.template.read_text(encoding="utf-8")
    params.use_jinja = True
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    # Finished prompts kept in RAM for reuse (llama.cpp's default allows 8 GiB).
    params.cache_ram_mib = 256
    params.verbosity = 3 if args.verbose else 2

    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if args.watch_stdin:

        def watch():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            stop.set()

        threading.Thread(target=watch, daemon=True).start()

    try:
        server = xllamacpp.Server(params)
    except Exception as e:  # the binding raises plain exceptions for load failures
        fail(f"the server did not start: {e}")
    base = server.listening_address
    if not base:
        fail("the server did not report an address")
    wait_healthy(base, args.ready_timeout)
    print(f"serve.py: {args.model.name} with {threads} thread(s), context {args.ctx}", file=sys.stderr, flush=True)
    print(f"listening {base}/v1", flush=True)

    while not stop.wait(0.5):
        pass
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
