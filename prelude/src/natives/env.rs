//! `prelude.env` (`prelude.md` §10): secrets (private strings) and the public settings of the
//! project's `[env]` table. Both read configuration through the host, not the network.

use katari_runtime::control::panic;
use katari_runtime::machine::Ctx;
use katari_runtime::value::{Record, Value};

use super::{Args, Kind, R, natives, throw};

natives! {
    "prelude.env.get_secret" ["key"] Kind::Pure => get_secret;
    "prelude.env.get_all" [] Kind::Pure => get_all;
}

fn get_secret(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let key = a.str(0)?;
    match ctx.host().secret(key) {
        Ok(Some(secret)) => Ok(Value::str(secret).with_private(true)),
        Ok(None) => {
            let message =
                format!("no secret named \"{key}\" in the environment or in secrets.toml");
            let fields = vec![
                a.get(0).clone(),
                Value::str(message).with_private(a.get(0).private()),
            ];
            Err(throw(ctx, "prelude.env.missing_secret", fields))
        }
        // The host refused `secrets.toml` (for example, readable by others): its message stops
        // the run.
        Err(message) => Err(panic(message)),
    }
}

fn get_all(ctx: &mut Ctx, _: &mut Args<'_>) -> R {
    let record: Record = ctx
        .host()
        .project_env()
        .into_iter()
        .map(|(k, v)| (k.into(), Value::str(v)))
        .collect();
    Ok(Value::record(record))
}
