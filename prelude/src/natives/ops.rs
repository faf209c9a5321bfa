//! The root module's primitives (`prelude.md` §3): arithmetic, equality, comparison, logic and
//! string concatenation — the operators' meaning.

use std::cmp::Ordering;

use katari_runtime::control::panic;
use katari_runtime::machine::Ctx;
use katari_runtime::value::{V, Value, equal as same};

use super::{Args, Kind, R, natives};

natives! {
    "prelude.add" ["left", "right"] Kind::Pure => add;
    "prelude.subtract" ["left", "right"] Kind::Pure => subtract;
    "prelude.multiply" ["left", "right"] Kind::Pure => multiply;
    "prelude.modulo" ["left", "right"] Kind::Pure => modulo;
    "prelude.divide" ["left", "right"] Kind::Pure => divide;
    "prelude.negate" ["value"] Kind::Pure => negate;
    "prelude.equal" ["left", "right"] Kind::Pure => equal;
    "prelude.not_equal" ["left", "right"] Kind::Pure => not_equal;
    "prelude.less_than" ["left", "right"] Kind::Pure => less_than;
    "prelude.less_or_equal" ["left", "right"] Kind::Pure => less_or_equal;
    "prelude.greater_than" ["left", "right"] Kind::Pure => greater_than;
    "prelude.greater_or_equal" ["left", "right"] Kind::Pure => greater_or_equal;
    "prelude.and" ["left", "right"] Kind::Pure => and;
    "prelude.or" ["left", "right"] Kind::Pure => or;
    "prelude.not" ["value"] Kind::Pure => not;
    "prelude.concat" ["left", "right"] Kind::Pure => concat;
}

/// Both operands as numbers, and whether both are integer-kind.
fn operands(a: &Args<'_>) -> Result<(f64, f64, bool), katari_runtime::control::Ctl> {
    let (x, xi) = a.num(0)?;
    let (y, yi) = a.num(1)?;
    Ok((x, y, xi && yi))
}

/// An arithmetic result (`language.md` §8.2); a zero result is `+0`.
fn arith(both_int: bool, n: f64) -> Value {
    Value::arith(both_int, if n == 0.0 { 0.0 } else { n })
}

fn add(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y, ints) = operands(a)?;
    Ok(arith(ints, x + y))
}

fn subtract(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y, ints) = operands(a)?;
    Ok(arith(ints, x - y))
}

fn multiply(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y, ints) = operands(a)?;
    Ok(arith(ints, x * y))
}

fn divide(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y, ints) = operands(a)?;
    if y == 0.0 {
        return Err(panic("division by zero"));
    }
    Ok(arith(ints, x / y))
}

/// Floor modulo computed exactly from the truncating remainder (`language.md` §8.2).
pub(crate) fn floor_mod(x: f64, y: f64) -> f64 {
    let r = x % y;
    if r != 0.0 && (r < 0.0) != (y < 0.0) {
        r + y
    } else {
        r
    }
}

fn modulo(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y, ints) = operands(a)?;
    if y == 0.0 {
        return Err(panic("modulo by zero"));
    }
    Ok(arith(ints, floor_mod(x, y)))
}

fn negate(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(match a.num(0)? {
        (n, true) => Value::int(-n),
        (n, false) => Value::num(-n),
    })
}

fn equal(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(same(a.get(0), a.get(1))))
}

fn not_equal(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(!same(a.get(0), a.get(1))))
}

/// Two numbers numerically (`None` when one is NaN), two strings by code point.
fn compare(a: &Args<'_>) -> Result<Option<Ordering>, katari_runtime::control::Ctl> {
    match (&a.get(0).v, &a.get(1).v) {
        (V::Int(x) | V::Num(x), V::Int(y) | V::Num(y)) => Ok(x.partial_cmp(y)),
        // UTF-8 byte order is code point order.
        (V::Str(x), V::Str(y)) => Ok(Some(x.as_bytes().cmp(y.as_bytes()))),
        (V::Int(_) | V::Num(_), V::Str(_)) | (V::Str(_), V::Int(_) | V::Num(_)) => {
            Err(panic("cannot compare a number with a string"))
        }
        (V::Int(_) | V::Num(_) | V::Str(_), _) => {
            Err(a.wrong(1, "a value of type number or string"))
        }
        _ => Err(a.wrong(0, "a value of type number or string")),
    }
}

fn less_than(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(compare(a)? == Some(Ordering::Less)))
}

fn less_or_equal(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(matches!(
        compare(a)?,
        Some(Ordering::Less | Ordering::Equal)
    )))
}

fn greater_than(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(compare(a)? == Some(Ordering::Greater)))
}

fn greater_or_equal(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(matches!(
        compare(a)?,
        Some(Ordering::Greater | Ordering::Equal)
    )))
}

fn and(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y) = (a.boolean(0)?, a.boolean(1)?);
    Ok(Value::bool(x && y))
}

fn or(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y) = (a.boolean(0)?, a.boolean(1)?);
    Ok(Value::bool(x || y))
}

fn not(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(Value::bool(!a.boolean(0)?))
}

fn concat(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (x, y) = (a.str(0)?, a.str(1)?);
    let mut s = String::with_capacity(x.len() + y.len());
    s.push_str(x);
    s.push_str(y);
    Ok(Value::str(s))
}
