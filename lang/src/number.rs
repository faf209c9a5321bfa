//! Numbers written as JavaScript writes them (`language.md` §11.2): the one text of a binary64
//! value that run results, JSON, templates and diagnostics all show.

use std::fmt::Write as _;

/// Integral values up to this one are written as their exact digits.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// JavaScript's `String(n)` for a binary64 value.
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    if x < 0.0 {
        return format!("-{}", format_number(-x));
    }
    // Integral values up to 2^53 print as their exact digits; the general path below is for
    // larger ones, fractions and exponents.
    if x.fract() == 0.0 && x <= EXACT_INTEGERS {
        return (x as u64).to_string();
    }
    // Rust's `{:e}` gives the shortest round-tripping digits: `d.ddde±x`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let mut out = String::new();
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}
