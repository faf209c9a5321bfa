//! `prelude.console` (`prelude.md` §15): lines on standard output and standard error, written
//! through the host. A private text is written redacted (`language.md` §8.6).

use katari_runtime::machine::Ctx;
use katari_runtime::value::Value;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.console.print" ["text"] Kind::Redacting => print;
    "prelude.console.error" ["text"] Kind::Redacting => error;
}

/// The line to write: the text, or `{"$redacted":true}` when it is private.
fn line<'a>(a: &'a Args<'_>) -> Result<&'a str, katari_runtime::control::Ctl> {
    let text = a.str(0)?;
    Ok(if a.get(0).private() {
        "{\"$redacted\":true}"
    } else {
        text
    })
}

fn print(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    ctx.host().print(line(a)?);
    Ok(Value::NULL)
}

fn error(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    ctx.host().eprint(line(a)?);
    Ok(Value::NULL)
}
