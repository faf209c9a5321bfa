//! What the benchmark harnesses bench/chat.rs and bench/threads.rs share (each includes this
//! file with `#[path]`): their arguments, finding programs, and milliseconds in tables.

use std::path::PathBuf;
use std::time::Duration;

/// The harness's arguments after the program name, without the `--bench` cargo adds.
pub struct Args(std::vec::IntoIter<String>);

impl Args {
    pub fn new() -> Args {
        let args: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        Args(args.into_iter())
    }

    pub fn next_arg(&mut self) -> Option<String> {
        self.0.next()
    }

    /// The value after `flag`; exits with status 2 when there is none.
    pub fn value(&mut self, flag: &str) -> String {
        self.0.next().unwrap_or_else(|| {
            eprintln!("{flag} needs a value");
            std::process::exit(2)
        })
    }

    /// The positive count after `flag`; exits with status 2 otherwise.
    pub fn count(&mut self, flag: &str) -> usize {
        let v = self.value(flag);
        v.parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or_else(|| {
                eprintln!("not a positive count: {v}");
                std::process::exit(2)
            })
    }
}

/// Exits with status 2 for an argument the harness does not know.
pub fn unknown(arg: &str) -> ! {
    eprintln!("unknown argument {arg}");
    std::process::exit(2)
}

/// The program `name` in a folder of `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// `path` made absolute against the working folder: the clients run in folders of their own.
pub fn absolute(path: String) -> PathBuf {
    std::path::absolute(&path).unwrap_or_else(|_| PathBuf::from(path))
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// The median of sorted samples; NaN without any.
pub fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Milliseconds with three significant digits or so; `–` for NaN (no samples).
pub fn fmt_ms(v: f64) -> String {
    if v.is_nan() {
        "–".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
