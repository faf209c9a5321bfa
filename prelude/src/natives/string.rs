//! `prelude.string` (`prelude.md` §5). Positions and lengths count Unicode code points; bounds
//! are clamped, never counted from the end.

use katari_runtime::budget;
use katari_runtime::machine::Ctx;
use katari_runtime::value::{Str, V, Value, number_text};
use katari_runtime::wire::parse_number;

use super::array::clamp;
use super::{Args, Kind, R, count, natives};

natives! {
    "prelude.string.length" ["value"] Kind::Pure => length;
    "prelude.string.split" ["value", "separator"] Kind::Pure => split;
    "prelude.string.join" ["parts", "separator"] Kind::Pure => join;
    "prelude.string.slice" ["value", "start", "end"] Kind::Pure => slice;
    "prelude.string.contains" ["value", "search"] Kind::Pure => contains;
    "prelude.string.starts_with" ["value", "search"] Kind::Pure => starts_with;
    "prelude.string.ends_with" ["value", "search"] Kind::Pure => ends_with;
    "prelude.string.index_of" ["value", "search"] Kind::Pure => index_of;
    "prelude.string.replace" ["value", "search", "replacement"] Kind::Pure => replace;
    "prelude.string.trim" ["value"] Kind::Pure => trim;
    "prelude.string.to_upper" ["value"] Kind::Pure => to_upper;
    "prelude.string.to_lower" ["value"] Kind::Pure => to_lower;
    "prelude.string.to_string" ["value"] Kind::Pure => to_string;
    "prelude.string.to_integer" ["value"] Kind::Pure => to_integer;
    "prelude.string.to_number" ["value"] Kind::Pure => to_number;
    "prelude.string.pad_start" ["value", "width", "padding"] Kind::Pure => pad_start;
    "prelude.string.pad_end" ["value", "width", "padding"] Kind::Pure => pad_end;
    "prelude.string.repeat" ["value", "count"] Kind::Pure => repeat;
}

/// The longest string `pad_start`, `pad_end` and `repeat` build, in code points.
const LENGTH_LIMIT: f64 = 10_000_000.0;

/// The largest magnitude `to_integer` accepts: 2^53 − 1.
const MAX_SAFE: u64 = 9_007_199_254_740_991;

fn length(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(count(a.str(0)?.chars().count()))
}

fn split(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (value, separator) = (a.str(0)?, a.str(1)?);
    let pieces: Vec<Value> = if separator.is_empty() {
        value.chars().map(|c| Value::str(c.to_string())).collect()
    } else {
        value.split(separator).map(Value::str).collect()
    };
    Ok(Value::array(pieces))
}

fn join(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let separator = a.str(1)?;
    let parts = a.array(0)?;
    // The exact size first (and the kinds checked), then the text written once into its final
    // string: building a `String` and copying it would touch twice the memory.
    let mut total = 0usize;
    for (i, part) in parts.iter().enumerate() {
        let V::Str(s) = &part.v else {
            return Err(a.fail(format_args!(
                "expected a value of type string for parts[{i}], got {}",
                part.describe()
            )));
        };
        total += s.len() + if i > 0 { separator.len() } else { 0 };
    }
    budget::string(total).map_err(|m| a.fail(m))?;
    if total == 0 {
        // (`init_with` does not take an empty size.)
        return Ok(Value::str(""));
    }
    let text = Str::init_with(total, |out| {
        let mut at = 0;
        for (i, part) in parts.iter().enumerate() {
            if let V::Str(s) = &part.v {
                if i > 0 {
                    out[at..at + separator.len()].copy_from_slice(separator.as_bytes());
                    at += separator.len();
                }
                out[at..at + s.len()].copy_from_slice(s.as_bytes());
                at += s.len();
            }
        }
    })
    .map_err(|e| a.fail(format_args!("internal: joined text is not UTF-8: {e}")))?;
    Ok(Value::new(V::Str(text)))
}

fn slice(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let value = a.str(0)?;
    let (start, end) = (a.int(1)?, a.int(2)?);
    // Indices count code points. In ASCII text (checked a word at a time) they are byte
    // offsets, so slicing a long text does not decode every character before the slice.
    let text = if value.is_ascii() {
        let len = value.len();
        let (start, end) = (clamp(start, len), clamp(end, len));
        if start < end { &value[start..end] } else { "" }
    } else {
        let len = value.chars().count();
        let (start, end) = (clamp(start, len), clamp(end, len));
        if start < end {
            let from = value
                .char_indices()
                .nth(start)
                .map_or(value.len(), |(i, _)| i);
            let rest = &value[from..];
            let to = rest
                .char_indices()
                .nth(end - start)
                .map_or(rest.len(), |(i, _)| i);
            &rest[..to]
        } else {
            ""
        }
    };
    Ok(Value::str(text))
}

fn contains(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(a.str(0)?.contains(a.str(1)?)))
}

fn starts_with(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(a.str(0)?.starts_with(a.str(1)?)))
}

fn ends_with(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(a.str(0)?.ends_with(a.str(1)?)))
}

fn index_of(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let value = a.str(0)?;
    Ok(match value.find(a.str(1)?) {
        Some(byte) => count(value[..byte].chars().count()),
        None => Value::NULL,
    })
}

fn replace(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (value, search, replacement) = (a.str(0)?, a.str(1)?, a.str(2)?);
    if search.is_empty() {
        return Ok(a.get(0).clone());
    }
    if replacement.len() > search.len() {
        let grown = value.matches(search).count() * (replacement.len() - search.len());
        budget::string(value.len() + grown).map_err(|m| a.fail(m))?;
    }
    Ok(Value::str(value.replace(search, replacement)))
}

fn trim(_: &mut Ctx, a: &mut Args<'_>) -> R {
    // `char::is_whitespace` is the Unicode `White_Space` property.
    let trimmed = a
        .str(0)?
        .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    Ok(Value::str(trimmed))
}

fn to_upper(_: &mut Ctx, a: &mut Args<'_>) -> R {
    // The standard library applies the default full case mappings (`ß` → `SS`).
    Ok(Value::str(a.str(0)?.to_uppercase()))
}

fn to_lower(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::str(a.str(0)?.to_lowercase()))
}

fn to_string(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let text = match &a.get(0).v {
        V::Null => "null".to_string(),
        V::Bool(b) => b.get().to_string(),
        V::Int(n) | V::Num(n) => return Ok(Value::str(number_text(*n))),
        V::Str(_) => return Ok(a.take(0)),
        _ => {
            return Err(a.wrong(0, "a value of type null or boolean or number or string"));
        }
    };
    Ok(Value::str(text))
}

/// An optional sign followed by decimal digits, at most 2^53 − 1 in magnitude.
pub(crate) fn parse_integer(text: &str) -> Option<f64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    if significant.len() > 16 {
        return None;
    }
    let magnitude: u64 = if significant.is_empty() {
        0
    } else {
        significant.parse().ok()?
    };
    if magnitude > MAX_SAFE {
        return None;
    }
    // `-0` is `0`.
    Some(if negative && magnitude > 0 {
        -(magnitude as f64)
    } else {
        magnitude as f64
    })
}

fn to_integer(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(parse_integer(a.str(0)?).map_or(Value::NULL, Value::int))
}

fn to_number(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(parse_number(a.str(0)?).map_or(Value::NULL, Value::num))
}

/// `value` padded to `width` code points with repetitions of `padding`, the last one cut.
fn pad(a: &Args<'_>, at_start: bool) -> R {
    let value = a.str(0)?;
    let width = a.int(1)?;
    let padding = a.str(2)?;
    let len = value.chars().count();
    if padding.is_empty() || len as f64 >= width {
        return Ok(a.get(0).clone());
    }
    if width > LENGTH_LIMIT {
        return Err(a.fail("the result would exceed 10000000 code points"));
    }
    let fill: String = padding.chars().cycle().take(width as usize - len).collect();
    Ok(Value::str(if at_start {
        fill + value
    } else {
        value.to_string() + &fill
    }))
}

fn pad_start(_: &mut Ctx, a: &mut Args<'_>) -> R {
    pad(a, true)
}

fn pad_end(_: &mut Ctx, a: &mut Args<'_>) -> R {
    pad(a, false)
}

fn repeat(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let value = a.str(0)?;
    let times = a.int(1)?;
    if times <= 0.0 || value.is_empty() {
        return Ok(Value::str(""));
    }
    if value.chars().count() as f64 * times > LENGTH_LIMIT {
        return Err(a.fail("the result would exceed 10000000 code points"));
    }
    budget::string(value.len() * times as usize).map_err(|m| a.fail(m))?;
    Ok(Value::str(value.repeat(times as usize)))
}
