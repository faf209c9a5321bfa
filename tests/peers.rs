//! Locating and starting the real MCP peers that `tests/peers/install.sh` installs into
//! `.peers/`: reference servers from npm, node 22, and Python virtual environments. A missing
//! peer fails the test loudly with the command that installs it; nothing is skipped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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
        let log =
            std::env::temp_dir().join(format!("katari-peer-{}-{port}.log", std::process::id()));
        let stderr = std::fs::File::create(&log)
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start test peer {program}: {e}"));
        let mut peer = Peer { child, port };
        if !wait_for_port(port, Duration::from_secs(30)) {
            let _ = peer.child.kill();
            let err: String = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .take(40)
                .map(|l| format!("{l}\n"))
                .collect();
            panic!("test peer {program} did not listen on port {port} within 30 s:\n{err}");
        }
        let _ = std::fs::remove_file(&log);
        peer
    }

    /// The base URL `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
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
