//! Content-addressed blobs stored concurrently (`prelude.md` §12, `host.md` §3.3.3): 16 parallel
//! branches in each of two processes store the same blob and blobs of their own into one folder,
//! reading back what they stored as they go. Every store succeeds, and every file anyone sees is
//! complete: its bytes hash to its name and its metadata parses.

use std::path::Path;
use std::process::Command;

use katari_runtime::mcp::blob;
use sha2::{Digest, Sha256};

/// Set in the second process: the folder to store into.
const WORKER: &str = "KATARI_TEST_BLOB_RACE_DIR";
const BRANCHES: usize = 16;
const ROUNDS: usize = 8;

/// The bytes every branch of both processes stores.
fn shared() -> Vec<u8> {
    (0..256 * 1024).map(|i| (i % 251) as u8).collect()
}

/// Checks that the blob `id` in `dir` is complete.
fn check(dir: &Path, id: &str) {
    let bytes = std::fs::read(dir.join(id)).expect("the blob can be read");
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(id, format!("sha256-{hex}"), "the blob file is complete");
    let meta = std::fs::read_to_string(dir.join(format!("{id}.json"))).expect("metadata");
    let meta: serde_json::Value = serde_json::from_str(&meta).expect("complete metadata");
    assert_eq!(meta["size"], bytes.len());
}

/// 16 branches each storing the shared blob and one of their own, `ROUNDS` times.
fn branches(dir: &Path, process: &str) {
    std::thread::scope(|scope| {
        for branch in 0..BRANCHES {
            scope.spawn(move || {
                let same = shared();
                for round in 0..ROUNDS {
                    let id = blob::store(dir, &same, "application/octet-stream")
                        .expect("stores the shared blob");
                    check(dir, &id);
                    let own: Vec<u8> = format!("{process} {branch} {round} ")
                        .bytes()
                        .cycle()
                        .take(64 * 1024)
                        .collect();
                    let id = blob::store(dir, &own, "text/plain").expect("stores its own blob");
                    check(dir, &id);
                }
            });
        }
    });
}

#[test]
fn parallel_branches_and_processes_store_complete_blobs() {
    if let Some(dir) = std::env::var_os(WORKER) {
        branches(Path::new(&dir), "second");
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let blobs = dir.path().join("blobs");
    let mut second = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "parallel_branches_and_processes_store_complete_blobs",
            "--test-threads=1",
        ])
        .env(WORKER, &blobs)
        .spawn()
        .expect("starts the second process");
    branches(&blobs, "first");
    assert!(
        second.wait().expect("the second process ends").success(),
        "the second process stored complete blobs"
    );
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(&blobs).expect("lists the folder") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with("sha256-"),
            "no temporary file is left: {name}"
        );
        if !name.ends_with(".json") {
            ids.push(name);
        }
    }
    // The shared blob and one per branch, round and process.
    assert_eq!(ids.len(), 1 + 2 * BRANCHES * ROUNDS);
    for id in ids {
        check(&blobs, &id);
    }
}
