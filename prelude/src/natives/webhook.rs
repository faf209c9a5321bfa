//! `prelude.webhook` (`prelude.md` §13): inbound HTTP endpoints on the loopback listener.

use katari_runtime::machine::Ctx;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.webhook.inbound" ["callback", "subscriber"] Kind::Io(&[]) => inbound;
}

fn inbound(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let callback = a.callable(0)?.clone();
    let subscriber = a.callable(1)?.clone();
    katari_runtime::listener::inbound(ctx, &callback, &subscriber)
}
