//! A 200-way `parallel for` of MCP tool calls (`bench/mcp_fanout.kt`, the smaller sibling of
//! `bench/mcp_fanout.sh`): every call must succeed and return the right sum.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The fan-out script shared with the benchmark.
fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/mcp_fanout.kt")
}

#[test]
fn two_hundred_parallel_tool_calls_all_succeed() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_katari"))
        .arg("run")
        .arg(script())
        .args(["-a", "n=200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("katari starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for katari") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the 200-way fan-out did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_to_string(&mut stdout)
        .expect("stdout is text");
    child
        .stderr
        .take()
        .expect("piped stderr")
        .read_to_string(&mut stderr)
        .expect("stderr is text");
    assert!(status.success(), "katari failed: {status}\n{stderr}");
    let fields: Vec<&str> = stdout.trim().trim_matches('"').split(' ').collect();
    assert_eq!(
        fields.len(),
        4,
        "expected \"<n> <errors> <wrong> <ms>\", got {stdout:?}"
    );
    assert_eq!(fields[0], "200", "every element has an outcome: {stdout:?}");
    assert_eq!(fields[1], "0", "no call failed: {stdout:?}\n{stderr}");
    assert_eq!(fields[2], "0", "every sum is right: {stdout:?}");
}
