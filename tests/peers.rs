//! Locating and starting the real MCP peers that `tests/peers/install.sh` installs into
//! `.peers/`: reference servers from npm, node 22, Python virtual environments, and a local LLM
//! behind llama.cpp's OpenAI-compatible server. A missing peer fails the test loudly with the
//! command that installs it; nothing is skipped.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The peers folder (`KATARI_PEERS`, else `.peers/` at the repository root).
pub fn peers_dir() -> PathBuf {
    std::env::var_os("KATARI_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".peers"))
}

/// A file inside the peers folder that must exist; panics with the install command otherwise.
pub fn peer_path(relative: &str) -> PathBuf {
    let path = peers_dir().join(relative);
    assert!(
        path.exists(),
        "test peer {} is missing: run tests/peers/install.sh (./test.sh does)",
        path.display()
    );
    path
}

/// The machine's node (20), used for the reference servers and the Inspector.
pub fn node() -> PathBuf {
    PathBuf::from("node")
}

/// Node 22 from the npm registry (the conformance suite needs it).
pub fn node22() -> PathBuf {
    peer_path("node22/node_modules/node/bin/node")
}

/// The conformance suite's entry script (run it with [`node22`]).
pub fn conformance() -> PathBuf {
    peer_path("node22/node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

/// The Python of the virtual environment with `mcp==2.3.0`.
pub fn python_mcp() -> PathBuf {
    peer_path("py/bin/python")
}

/// The Python of the virtual environment with `fastmcp==4.2.3`.
pub fn python_fastmcp() -> PathBuf {
    peer_path("fastmcp/bin/python")
}

/// The entry script of `@modelcontextprotocol/server-everything`: the current build, or the
/// paginating 2025.12.18 build installed under the alias `se-legacy`.
pub fn everything_entry(legacy: bool) -> PathBuf {
    let package = if legacy {
        "se-legacy"
    } else {
        "@modelcontextprotocol/server-everything"
    };
    peer_path(&format!("npm/node_modules/{package}/dist/index.js"))
}

/// A free loopback port chosen by the operating system.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("cannot pick a free port: {e}"))
}

/// Waits until something accepts connections on the loopback `port`.
pub fn wait_for_port(port: u16, timeout: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A peer process that is killed (and reaped) when dropped.
#[derive(Debug)]
pub struct Peer {
    pub child: Child,
    /// The port it listens on (0 for stdio peers).
    pub port: u16,
}

impl Peer {
    /// Starts `command` and waits for it to listen on `port`; panics (after killing it) if it
    /// does not within 30 s.
    pub fn start(mut command: Command, port: u16) -> Peer {
        let program = format!("{:?}", command.get_program());
        // Stderr goes to a file, not a pipe: a pipe nobody reads would block a chatty peer.
        let log = startup_log("katari-peer-");
        let stderr = log_stdio(&log);
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start test peer {program}: {e}"));
        let mut peer = Peer { child, port };
        if !wait_for_port(port, Duration::from_secs(30)) {
            let _ = peer.child.kill();
            let err: String = std::fs::read_to_string(log.path())
                .unwrap_or_default()
                .lines()
                .take(40)
                .map(|l| format!("{l}\n"))
                .collect();
            panic!("test peer {program} did not listen on port {port} within 30 s:\n{err}");
        }
        peer
    }

    /// The base URL `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The OpenAI-compatible base URL of a peer from [`start_local_llm`]:
    /// `http://127.0.0.1:PORT/v1` (requests go to `{base}/chat/completions`).
    pub fn local_llm_base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `server-everything` over HTTP: `mode` is `streamableHttp` (endpoint `/mcp`) or `sse`
/// (legacy HTTP+SSE, endpoint `/sse`).
pub fn start_everything(mode: &str, legacy_build: bool) -> Peer {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg(everything_entry(legacy_build))
        .arg(mode)
        .env("PORT", port.to_string());
    Peer::start(command, port)
}

/// The model name the local LLM reports (`/v1/models` and every reply); `tests/llm/serve.py`
/// sets it.
pub const LOCAL_LLM_MODEL: &str = "qwen2.5-coder-0.5b-instruct";

/// How long [`start_local_llm`] waits for the server to answer its health check.
pub const LOCAL_LLM_READY: Duration = Duration::from_secs(120);

/// Starts the local LLM (Qwen2.5-Coder-0.5B-Instruct behind llama.cpp's OpenAI-compatible
/// server, `tests/llm/serve.py`, docs/local-llm.md) on a port the system picks, and waits until
/// it is ready. Panics loudly, naming `tests/peers/install.sh`, when the model or its virtual
/// environment is missing, and with the server's log when it does not become ready within
/// [`LOCAL_LLM_READY`]. The server is killed by process id when the returned peer is dropped,
/// and stops by itself if this process dies (it watches its standard input, a pipe held here).
/// `KATARI_LLM_THREADS` sets its thread count (default `auto`, see `tests/llm/serve.py`).
pub fn start_local_llm() -> Peer {
    let llm = peers_dir().join("llm");
    let python = llm.join("bin/python");
    let model = llm.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    for needed in [&python, &model] {
        assert!(
            needed.exists(),
            "the local LLM is not installed ({} is missing): run tests/peers/install.sh \
             (./test.sh does), or tests/peers/install.sh --llm for the LLM alone",
            needed.display()
        );
    }
    let serve = repo_root().join("tests/llm/serve.py");
    // Two threads are fastest on an idle machine and several times slower than one while other
    // work keeps a core busy; `auto` lets serve.py choose by the load average.
    let threads = std::env::var("KATARI_LLM_THREADS").unwrap_or_else(|_| "auto".into());
    let log = startup_log("katari-local-llm-");
    let stderr = log_stdio(&log);
    let mut child = Command::new(&python)
        .arg(&serve)
        .args([
            "--port",
            "0",
            "--watch-stdin",
            "--threads",
            &threads,
            "--model",
        ])
        .arg(&model)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the local LLM ({}): {e}", serve.display()));
    // The readiness line arrives on stdout; a thread reads it so the wait can be bounded.
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let start = Instant::now();
    let mut port = None;
    while port.is_none() {
        let left = LOCAL_LLM_READY.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => port = listening_port(&line),
            Err(_) => break,
        }
    }
    let Some(port) = port else {
        let _ = child.kill();
        let _ = child.wait();
        let err = std::fs::read_to_string(log.path()).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "the local LLM ({}) did not become ready within {} s (or exited); its log:\n{}",
            serve.display(),
            LOCAL_LLM_READY.as_secs(),
            tail.join("\n")
        );
    };
    Peer { child, port }
}

/// A fresh file for a peer's stderr while it starts, read when it fails to start; its name is
/// removed when the value is dropped, once the peer is up.
fn startup_log(prefix: &str) -> tempfile::NamedTempFile {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".log")
        .tempfile()
        .expect("create a peer's log file")
}

fn log_stdio(log: &tempfile::NamedTempFile) -> Stdio {
    log.reopen()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null())
}

/// The port of a `listening http://127.0.0.1:PORT/v1` line.
fn listening_port(line: &str) -> Option<u16> {
    line.strip_prefix("listening http://127.0.0.1:")?
        .strip_suffix("/v1")?
        .parse()
        .ok()
}
