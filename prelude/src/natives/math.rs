//! `prelude.math` (`prelude.md` §6): absolute value, minimum and maximum, the three
//! number→integer conversions, powers and square roots.

use katari_runtime::machine::Ctx;
use katari_runtime::value::Value;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.math.abs" ["value"] Kind::Pure => abs;
    "prelude.math.min" ["left", "right"] Kind::Pure => min;
    "prelude.math.max" ["left", "right"] Kind::Pure => max;
    "prelude.math.floor" ["value"] Kind::Pure => floor;
    "prelude.math.ceil" ["value"] Kind::Pure => ceil;
    "prelude.math.round" ["value"] Kind::Pure => round;
    "prelude.math.pow" ["base", "exponent"] Kind::Pure => pow;
    "prelude.math.sqrt" ["value"] Kind::Pure => sqrt;
}

fn abs(_: &mut Ctx, a: &mut Args<'_>) -> R {
    Ok(match a.num(0)? {
        (n, true) => Value::int(n.abs()),
        (n, false) => Value::num(n.abs()),
    })
}

/// The smaller (`smaller`) or larger operand, integer-kind only when both are; equal operands
/// give `left`, a NaN operand gives NaN.
fn pick(a: &Args<'_>, smaller: bool) -> R {
    let (x, xi) = a.num(0)?;
    let (y, yi) = a.num(1)?;
    let n = if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x == y || (smaller == (x < y)) {
        x
    } else {
        y
    };
    Ok(Value::arith(xi && yi, n))
}

fn min(_: &mut Ctx, a: &mut Args<'_>) -> R {
    pick(a, true)
}

fn max(_: &mut Ctx, a: &mut Args<'_>) -> R {
    pick(a, false)
}

/// Rounds with `f`; a non-finite argument panics, `-0` becomes `0`.
fn convert(a: &Args<'_>, f: fn(f64) -> f64) -> R {
    let (n, _) = a.num(0)?;
    if !n.is_finite() {
        return Err(a.fail("not a finite number"));
    }
    Ok(Value::int(f(n) + 0.0))
}

fn floor(_: &mut Ctx, a: &mut Args<'_>) -> R {
    convert(a, f64::floor)
}

fn ceil(_: &mut Ctx, a: &mut Args<'_>) -> R {
    convert(a, f64::ceil)
}

fn round(_: &mut Ctx, a: &mut Args<'_>) -> R {
    // `f64::round` rounds ties away from zero.
    convert(a, f64::round)
}

fn pow(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (base, bi) = a.num(0)?;
    let (exponent, ei) = a.num(1)?;
    let n = base.powf(exponent);
    if !n.is_finite() {
        return Err(a.fail("the result is not a finite number"));
    }
    Ok(Value::arith(bi && ei, n + 0.0))
}

fn sqrt(_: &mut Ctx, a: &mut Args<'_>) -> R {
    let (n, integer) = a.num(0)?;
    if n < 0.0 {
        return Err(a.fail("negative operand"));
    }
    let root = n.sqrt();
    if !root.is_finite() {
        return Err(a.fail("the result is not a finite number"));
    }
    Ok(Value::arith(integer, root + 0.0))
}
