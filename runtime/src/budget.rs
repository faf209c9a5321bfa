//! The memory budget of a run: how large one string and one array may grow, and how much memory
//! the whole process may hold (docs/guide/command-line.md, "Limits").
//!
//! Scripts build values with operators and natives whose results can double at every step
//! (`s ++ s`, `array.concat`), so without bounds a short loop asks the allocator for terabytes
//! and the process dies on a failed allocation, or first takes the machine's memory. Each place
//! that builds a string or an array from others asks here first; a value over a bound is a panic
//! that names the bound, which a handler can catch like any other.
//!
//! The total is checked against the process's resident memory, read from the operating system
//! only when large values have been built since the last look, so small values cost nothing.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes one string may hold: 256 MiB.
pub const STRING_BYTES: usize = 256 * 1024 * 1024;

/// The most elements one array may hold, as for `array.range`.
pub const ARRAY_ITEMS: usize = 10_000_000;

/// The process's memory budget when `KATARI_MEMORY_LIMIT` does not set one: 4 GiB.
pub const DEFAULT_LIMIT: usize = 4 * 1024 * 1024 * 1024;

/// Values smaller than this are not counted towards a look at the total.
const LARGE: usize = 1024 * 1024;

/// The bytes of large values built since resident memory was last read.
const LOOK_EVERY: usize = 64 * 1024 * 1024;

static SINCE_LOOK: AtomicUsize = AtomicUsize::new(0);

/// Checks a string of `bytes` bytes about to be built; the message of the panic otherwise.
#[inline]
pub fn string(bytes: usize) -> Result<(), String> {
    if bytes <= LARGE {
        return Ok(());
    }
    if bytes > STRING_BYTES {
        return Err(format!(
            "the string would be {bytes} bytes, over katari's limit of {STRING_BYTES} bytes for one string"
        ));
    }
    total(bytes)
}

/// Checks an array of `items` elements about to be built; the message of the panic otherwise.
#[inline]
pub fn array(items: usize) -> Result<(), String> {
    // An element is three words.
    let bytes = items.saturating_mul(3 * std::mem::size_of::<usize>());
    if bytes <= LARGE {
        return Ok(());
    }
    if items > ARRAY_ITEMS {
        return Err(format!(
            "the array would have {items} elements, over katari's limit of {ARRAY_ITEMS} for one array"
        ));
    }
    total(bytes)
}

/// Counts a large value of `bytes` and, every [`LOOK_EVERY`] bytes of them, compares the
/// process's resident memory with the budget.
#[cold]
fn total(bytes: usize) -> Result<(), String> {
    let since = SINCE_LOOK.fetch_add(bytes, Ordering::Relaxed) + bytes;
    if since < LOOK_EVERY {
        return Ok(());
    }
    SINCE_LOOK.store(0, Ordering::Relaxed);
    let limit = limit();
    match resident() {
        Some(held) if held.saturating_add(bytes) > limit => Err(format!(
            "the run's memory budget of {limit} bytes is exhausted ({held} bytes held, {bytes} more needed); set KATARI_MEMORY_LIMIT to change it"
        )),
        _ => Ok(()),
    }
}

/// The budget: `KATARI_MEMORY_LIMIT` (bytes, or a number with `K`, `M` or `G` for binary
/// multiples), else [`DEFAULT_LIMIT`].
pub fn limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("KATARI_MEMORY_LIMIT")
            .ok()
            .and_then(|text| parse_size(&text))
            .unwrap_or(DEFAULT_LIMIT)
    })
}

/// `4294967296`, `512M`, `4G`, `64k`: a size in bytes; `None` for anything else.
pub fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().last()? {
        (at, c) if c.is_ascii_alphabetic() => (&text[..at], c.to_ascii_uppercase()),
        _ => (text, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return None,
    };
    let n: usize = digits.trim().parse().ok()?;
    n.checked_mul(1usize << shift).filter(|n| *n > 0)
}

/// The process's resident memory in bytes, where the system tells it (Linux: `VmRSS`).
fn resident() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size(" 4G "), Some(4 << 30));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("12T"), None);
    }

    #[test]
    fn one_value_over_its_bound_is_refused_with_the_bound_named() {
        assert!(string(STRING_BYTES).is_ok());
        let refused = string(STRING_BYTES + 1).expect_err("over the bound");
        assert!(
            refused.contains("268435456 bytes for one string"),
            "{refused}"
        );
        assert!(array(ARRAY_ITEMS).is_ok());
        let refused = array(ARRAY_ITEMS + 1).expect_err("over the bound");
        assert!(
            refused.contains("limit of 10000000 for one array"),
            "{refused}"
        );
    }

    #[test]
    fn resident_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(resident().is_some_and(|n| n > 0));
        }
    }
}
