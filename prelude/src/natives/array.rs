//! `prelude.array` (`prelude.md` §4): element access, copies, searches, ranges and the stable
//! sort. `filter` and `map` have bodies in the `.kt` file.
//!
//! The structural natives (`get`, `append`, `concat`, `slice`, `flatten`, `reverse`, `empty`)
//! keep each element's own private flag; a container they build is private only when a container
//! it is copied from is, or when a private index or bound shapes it (`language.md` §8.6 rule 4).

use std::cmp::Ordering;

use katari_runtime::budget;
use katari_runtime::machine::Ctx;
use katari_runtime::value::{V, Value, equal, format_number};

use super::{Args, Kind, R, count, natives};

natives! {
    "prelude.array.get" ["target", "index"] Kind::Structural => get;
    "prelude.array.length" ["target"] Kind::Pure => length;
    "prelude.array.append" ["target", "value"] Kind::Structural => append;
    "prelude.array.concat" ["left", "right"] Kind::Structural => concat;
    "prelude.array.slice" ["target", "start", "end"] Kind::Structural => slice;
    "prelude.array.contains" ["target", "value"] Kind::Pure => contains;
    "prelude.array.index_of" ["target", "value"] Kind::Pure => index_of;
    "prelude.array.flatten" ["target"] Kind::Structural => flatten;
    "prelude.array.reverse" ["target"] Kind::Structural => reverse;
    "prelude.array.range" ["start", "end"] Kind::Pure => range;
    "prelude.array.empty" [] Kind::Structural => empty;
    "prelude.array.sort" ["target", "by"] Kind::Pure => sort;
}

/// The most elements `range` builds.
const RANGE_LIMIT: f64 = 10_000_000.0;

fn get(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let items = a.array(0)?;
    let index = a.int(1)?;
    let shaped = a.get(0).private() || a.get(1).private();
    let found = if index >= 0.0 && index < items.len() as f64 {
        items[index as usize].clone()
    } else {
        Value::NULL
    };
    Ok(found.with_private(shaped))
}

fn length(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(count(a.array(0)?.len()))
}

fn append(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let private = a.get(0).private();
    budget::array(a.array(0)?.len() + 1).map_err(|m| a.fail(m))?;
    let mut items = Vec::with_capacity(a.array(0)?.len() + 1);
    items.extend(a.array(0)?.iter().cloned());
    items.push(a.take(1));
    Ok(Value::array(items).with_private(private))
}

fn concat(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (left, right) = (a.array(0)?, a.array(1)?);
    budget::array(left.len() + right.len()).map_err(|m| a.fail(m))?;
    let mut items = Vec::with_capacity(left.len() + right.len());
    items.extend(left.iter().cloned());
    items.extend(right.iter().cloned());
    Ok(Value::array(items).with_private(a.get(0).private() || a.get(1).private()))
}

/// A bound clamped to `[0, len]`.
pub(crate) fn clamp(bound: f64, len: usize) -> usize {
    if bound <= 0.0 {
        0
    } else if bound >= len as f64 {
        len
    } else {
        bound as usize
    }
}

fn slice(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let items = a.array(0)?;
    let (start, end) = (a.int(1)?, a.int(2)?);
    let (start, end) = (clamp(start, items.len()), clamp(end, items.len()));
    let private = a.get(0).private() || a.get(1).private() || a.get(2).private();
    let part = if start < end {
        items[start..end].to_vec()
    } else {
        Vec::new()
    };
    Ok(Value::array(part).with_private(private))
}

fn contains(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let value = a.get(1);
    Ok(Value::bool(a.array(0)?.iter().any(|x| equal(x, value))))
}

fn index_of(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let value = a.get(1);
    Ok(match a.array(0)?.iter().position(|x| equal(x, value)) {
        Some(i) => count(i),
        None => Value::NULL,
    })
}

fn flatten(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let outer = a.get(0).private();
    // The result is copied from the outer array and from every inner one, so a private inner
    // array makes it private too (§8.6 rule 4): its length would reveal the inner one's, as
    // `array.concat` of that array would.
    let mut copied_private = outer;
    let total = a
        .array(0)?
        .iter()
        .map(|inner| match &inner.v {
            V::Array(elements) => elements.len(),
            _ => 0,
        })
        .sum();
    budget::array(total).map_err(|m| a.fail(m))?;
    let mut items = Vec::with_capacity(total);
    for (i, inner) in a.array(0)?.iter().enumerate() {
        let V::Array(elements) = &inner.v else {
            return Err(a.fail(format_args!(
                "expected a value of type array for target[{i}], got {}",
                inner.describe()
            )));
        };
        // Elements read through a private inner array are private (rule 3).
        let through = outer || inner.private();
        copied_private |= inner.private();
        items.extend(elements.iter().map(|e| e.clone().with_private(through)));
    }
    Ok(Value::array(items).with_private(copied_private))
}

fn reverse(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let items: Vec<Value> = a.array(0)?.iter().rev().cloned().collect();
    Ok(Value::array(items).with_private(a.get(0).private()))
}

fn range(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (start, end) = (a.int(0)?, a.int(1)?);
    let n = end - start;
    if n <= 0.0 {
        return Ok(Value::array(Vec::new()));
    }
    if n > RANGE_LIMIT {
        return Err(a.fail(format_args!(
            "{} elements exceed the limit of 10000000",
            format_number(n)
        )));
    }
    budget::array(n as usize).map_err(|m| a.fail(m))?;
    Ok(Value::array(
        (0..n as usize)
            .map(|i| Value::int(start + i as f64))
            .collect(),
    ))
}

fn empty(_: &mut Ctx, _: &mut Args<'_>) -> R {
    Ok(Value::array(Vec::new()))
}

/// A sort key: numbers first (numerically), then strings (by code point).
enum Key {
    Number(f64),
    Text(katari_runtime::value::Str),
}

fn order(x: &Key, y: &Key) -> Ordering {
    match (x, y) {
        // NaN keys are refused before sorting, so every pair of numbers compares.
        (Key::Number(p), Key::Number(q)) => p.partial_cmp(q).unwrap_or(Ordering::Equal),
        (Key::Number(_), Key::Text(_)) => Ordering::Less,
        (Key::Text(_), Key::Number(_)) => Ordering::Greater,
        (Key::Text(p), Key::Text(q)) => p.as_bytes().cmp(q.as_bytes()),
    }
}

fn sort(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let items = a.array(0)?.clone();
    if items.is_empty() {
        return Ok(Value::array(Vec::new()));
    }
    let through = a.get(0).private();
    let by = match &a.get(1).v {
        V::Null => None,
        V::Callable(_) => Some(a.get(1).clone()),
        _ => return Err(a.wrong(1, "a callable value")),
    };
    // The keys, computed once per element in order, before anything is reordered.
    let mut keyed_private = false;
    let mut keys = Vec::with_capacity(items.len());
    for item in items.iter() {
        let key = match &by {
            Some(f) => ctx.call(
                f,
                vec![("value".into(), item.clone().with_private(through))],
            )?,
            None => item.clone(),
        };
        keyed_private |= key.private();
        keys.push(match &key.v {
            V::Int(n) | V::Num(n) if n.is_nan() => return Err(a.fail("cannot order NaN")),
            V::Int(n) | V::Num(n) => Key::Number(*n),
            V::Str(s) => Key::Text(s.clone()),
            _ => {
                return Err(a.fail(format_args!(
                    "cannot order {} without a key function",
                    key.describe()
                )));
            }
        });
    }
    let mut order_of: Vec<usize> = (0..items.len()).collect();
    // `sort_by` is stable: equal keys keep their original order.
    order_of.sort_by(|&i, &j| order(&keys[i], &keys[j]));
    let sorted = order_of.into_iter().map(|i| items[i].clone()).collect();
    // The order reveals the keys, so private keys make the result private.
    Ok(Value::array(sorted).with_private(keyed_private))
}
