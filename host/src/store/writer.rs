//! Which process wrote a pending message row, and whether it still runs (`host.md` §7.9.6,
//! §7.10.1): a turn whose writer has ended is interrupted, one whose writer runs is in progress.
//!
//! A process id alone is a weak name: ids are reused, and a container starts its katari with the
//! same small id every time, so a crashed turn would look alive to the next run. On Linux a writer
//! is therefore also named by its start (the boot id and the process's start time in clock ticks
//! since boot), which no later process with the same id shares. Elsewhere the id alone is used.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

/// The identity recorded in `writer_pid` and `writer_start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    pub pid: i64,
    /// `BOOT_ID:START_TICKS` on Linux, `None` where the start cannot be read.
    pub start: Option<String>,
}

/// This process.
pub fn current() -> &'static Writer {
    static CURRENT: OnceLock<Writer> = OnceLock::new();
    CURRENT.get_or_init(|| {
        let pid = std::process::id();
        Writer {
            pid: i64::from(pid),
            start: start_of(pid),
        }
    })
}

/// The turns this process has begun and not yet committed or failed, as (thread id, turn).
/// A pending row carrying this process's identity is in progress only when its turn is listed
/// here: one left behind by a turn whose ending could not be written is interrupted.
static OPEN: Mutex<BTreeSet<(String, i64)>> = Mutex::new(BTreeSet::new());

pub fn open_turn(thread_id: &str, turn: i64) {
    OPEN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((thread_id.to_string(), turn));
}

pub fn close_turn(thread_id: &str, turn: i64) {
    OPEN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(thread_id.to_string(), turn));
}

/// Whether the turn `turn` of `thread_id`, with a pending row written by `pid` (started at
/// `start`), is still being written.
pub fn is_writing(thread_id: &str, turn: i64, pid: Option<i64>, start: Option<&str>) -> bool {
    let Some(pid) = pid else {
        return false;
    };
    let me = current();
    if pid == me.pid && start == me.start.as_deref() {
        return OPEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(thread_id.to_string(), turn));
    }
    is_running(pid, start)
}

/// Whether the process `pid`, which started at `start` when that is known, still runs.
fn is_running(pid: i64, start: Option<&str>) -> bool {
    let Ok(pid) = u32::try_from(pid) else {
        return false;
    };
    if pid == 0 || !exists(pid) {
        return false;
    }
    match (start, start_of(pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        // The process exists but its start cannot be read (another system, or /proc hidden):
        // the id is all there is to go on.
        (_, None) => !is_zombie(pid),
        (None, Some(_)) => true,
    }
}

#[cfg(unix)]
fn exists(pid: u32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    // Signal 0 checks for the process without signalling it; EPERM means it exists but belongs
    // to another user.
    match kill(Pid::from_raw(raw), None) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(_) => true,
    }
}

/// Without a way to ask, a writer is assumed to run: its turn then stays out of the history
/// (as every incomplete turn does) but is not reported as interrupted.
#[cfg(not(unix))]
fn exists(_pid: u32) -> bool {
    true
}

/// The Linux start of `pid`: `BOOT_ID:TICKS`, `None` for a zombie (it has ended; only its
/// parent has not collected it yet) or where `/proc` cannot tell.
#[cfg(target_os = "linux")]
fn start_of(pid: u32) -> Option<String> {
    static BOOT: OnceLock<Option<String>> = OnceLock::new();
    let boot = BOOT
        .get_or_init(|| {
            std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .as_ref()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself,
    // so the fields are counted from the last ')': field 3 (the state) is the first after it
    // and field 22 (the start time) the twentieth.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    let ticks = fields.get(19)?;
    Some(format!("{boot}:{ticks}"))
}

#[cfg(not(target_os = "linux"))]
fn start_of(_pid: u32) -> Option<String> {
    None
}

#[cfg(target_os = "linux")]
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = &stat[stat.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|state| state == "Z")
        })
        .unwrap_or(false)
}

#[cfg(not(target_os = "linux"))]
fn is_zombie(_pid: u32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_an_ended_one_does_not() {
        let me = current();
        assert!(is_running(me.pid, me.start.as_deref()));
        let mut child = std::process::Command::new(std::env::current_exe().expect("exe"))
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawns");
        let pid = i64::from(child.id());
        let start = start_of(child.id());
        child.wait().expect("waits");
        assert!(!is_running(pid, start.as_deref()));
        assert!(!is_running(0, None));
        assert!(!is_running(-5, None));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_reused_process_id_with_another_start_has_ended() {
        let me = current();
        assert!(me.start.is_some());
        assert!(!is_running(me.pid, Some("another-boot:1")));
    }

    #[test]
    fn this_process_writes_only_the_turns_it_has_open() {
        let me = current();
        let start = me.start.as_deref();
        assert!(!is_writing("t-open", 1, Some(me.pid), start));
        open_turn("t-open", 1);
        assert!(is_writing("t-open", 1, Some(me.pid), start));
        assert!(!is_writing("t-open", 2, Some(me.pid), start));
        close_turn("t-open", 1);
        assert!(!is_writing("t-open", 1, Some(me.pid), start));
        assert!(!is_writing("t-open", 1, None, None));
    }
}
