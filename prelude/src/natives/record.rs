//! `prelude.record` (`prelude.md` §7): homogeneous string-keyed maps. Results are plain records
//! in insertion order (`language.md` §8.4), except that `keys` and `entries` sort by code point.
//! A data value reached through a `record(…)` filter is read as the plain record of its fields.
//!
//! `get`, `set`, `remove`, `merge`, `entries` and `empty` are structural (§8.6 rule 4): values
//! keep their own private flags, and a record they build is private only when a record it is
//! copied from is private or a private key shapes it.

use katari_runtime::machine::Ctx;
use katari_runtime::value::{Record, Value};

use super::{Args, Kind, R, count, natives};

natives! {
    "prelude.record.get" ["target", "key"] Kind::Structural => get;
    "prelude.record.has" ["target", "key"] Kind::Pure => has;
    "prelude.record.size" ["target"] Kind::Pure => size;
    "prelude.record.set" ["target", "key", "value"] Kind::Structural => set;
    "prelude.record.remove" ["target", "key"] Kind::Structural => remove;
    "prelude.record.merge" ["left", "right"] Kind::Structural => merge;
    "prelude.record.empty" [] Kind::Structural => empty;
    "prelude.record.keys" ["target"] Kind::Pure => keys;
    "prelude.record.entries" ["target"] Kind::Structural => entries;
}

fn get(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let shaped = a.get(0).private() || a.get(1).private();
    let found = a.record(0)?.get(a.str(1)?).cloned();
    Ok(found.unwrap_or(Value::NULL).with_private(shaped))
}

fn has(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(a.record(0)?.contains_key(a.str(1)?)))
}

fn size(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(count(a.record(0)?.len()))
}

fn set(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let shaped = a.get(0).private() || a.get(1).private();
    let mut record = a.record(0)?.into_owned();
    let key = a.str(1)?.into();
    // `insert` keeps an existing key's position; a new key goes last.
    record.insert(key, a.take(2));
    Ok(Value::record(record).with_private(shaped))
}

fn remove(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let shaped = a.get(0).private() || a.get(1).private();
    let mut record = a.record(0)?.into_owned();
    record.shift_remove(a.str(1)?);
    Ok(Value::record(record).with_private(shaped))
}

fn merge(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let private = a.get(0).private() || a.get(1).private();
    let mut record = a.record(0)?.into_owned();
    for (k, v) in a.record(1)?.iter() {
        record.insert(k.clone(), v.clone());
    }
    Ok(Value::record(record).with_private(private))
}

fn empty(_: &mut Ctx, _: &mut Args<'_>) -> R {
    Ok(Value::record(Record::default()))
}

/// The entries sorted by key (code point order is UTF-8 byte order).
fn sorted(record: &Record) -> Vec<(&std::sync::Arc<str>, &Value)> {
    let mut pairs: Vec<_> = record.iter().collect();
    pairs.sort_by(|(k, _), (j, _)| k.as_bytes().cmp(j.as_bytes()));
    pairs
}

fn keys(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let record = a.record(0)?;
    let keys = sorted(&record)
        .into_iter()
        .map(|(k, _)| Value::str(k.clone()))
        .collect();
    Ok(Value::array(keys))
}

fn entries(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let through = a.get(0).private();
    let record = a.record(0)?;
    let pairs = sorted(&record)
        .into_iter()
        .map(|(k, v)| {
            Value::array(vec![
                Value::str(k.clone()).with_private(through),
                v.clone().with_private(through),
            ])
        })
        .collect();
    Ok(Value::array(pairs).with_private(through))
}
