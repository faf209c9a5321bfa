//! `prelude.string` (`prelude.md` §5). Positions and lengths count Unicode code points; bounds
//! are clamped, never counted from the end.

use katari_runtime::machine::Ctx;
use katari_runtime::value::{V, Value, number_text};
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
    // Sized up front so that joining many pieces does not regrow and copy the text repeatedly.
    let total: usize = parts
        .iter()
        .map(|p| match &p.v {
            V::Str(s) => s.len() + separator.len(),
            _ => 0,
        })
        .sum();
    let mut out = String::with_capacity(total);
    for (i, part) in parts.iter().enumerate() {
        let V::Str(s) = &part.v else {
            return Err(a.fail(format_args!(
                "expected a value of type string for parts[{i}], got {}",
                part.describe()
            )));
        };
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(s);
    }
    Ok(Value::str(out))
}

fn slice(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let value = a.str(0)?;
    let (start, end) = (a.int(1)?, a.int(2)?);
    let len = value.chars().count();
    let (start, end) = (clamp(start, len), clamp(end, len));
    Ok(Value::str(if start < end {
        value
            .chars()
            .skip(start)
            .take(end - start)
            .collect::<String>()
    } else {
        String::new()
    }))
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
    Ok(Value::str(value.repeat(times as usize)))
}
