//! `prelude.time` (`prelude.md` §16): the wall clock and sleeping that an interrupt or a
//! cancellation ends.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use katari_runtime::control::Control;
use katari_runtime::machine::Ctx;
use katari_runtime::value::Value;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.time.now" [] Kind::Io(&[]) => now;
    "prelude.time.sleep" ["milliseconds"] Kind::Io(&[]) => sleep;
}

/// How often a sleeping computation looks for an interrupt.
const TICK: Duration = Duration::from_millis(50);

fn now(_: &mut Ctx, _: &mut Args<'_>) -> R {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    // A whole number, delivered integer-kind although the declared type is `number`.
    Ok(Value::int(ms as f64))
}

fn sleep(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let ms = a.int(0)?;
    if ms <= 0.0 {
        return Ok(Value::NULL);
    }
    let end = Instant::now() + Duration::from_secs_f64((ms / 1000.0).min(1e9));
    // A cancelled parallel branch (or a served call whose subscriber finished) stops sleeping
    // like an interrupted one.
    let cancel = ctx.cancel_flag();
    loop {
        let cancelled = cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
        if ctx.interrupted() || cancelled {
            return Err(Box::new(Control::Interrupted));
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Value::NULL);
        }
        std::thread::sleep(left.min(TICK));
    }
}
