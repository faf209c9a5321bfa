//! The process's one async runtime: MCP clients, the loopback listener and OAuth run on it, and
//! evaluator threads (which are never tokio threads) block on it without stalling it.

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::control::{Control, Ctl};
use crate::machine::Ctx;

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// The shared multi-threaded runtime, started on first use.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("katari-reactor")
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("cannot start the async runtime: {e}"))
    })
}

/// Runs `f` on the reactor and waits for it on the calling evaluator thread. An interrupt
/// (Ctrl-C) or the cancellation of this branch drops the future and ends the wait with
/// [`Control::Interrupted`] (or the branch's cancellation), so a hanging server never wedges a run.
pub fn block_on<F: Future>(ctx: &Ctx, f: F) -> Result<F::Output, Ctl> {
    let m = ctx.m.clone();
    let cancel = ctx.cancel_flag();
    let stop = async move {
        let mut tick = tokio::time::interval(Duration::from_millis(25));
        loop {
            tick.tick().await;
            let cancelled = cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
            if m.interrupted.load(Ordering::Relaxed) || cancelled {
                return;
            }
        }
    };
    // The future runs on this thread inside the runtime's context; its spawned tasks (rmcp's
    // transports) run on the runtime's workers.
    runtime().block_on(async move {
        tokio::select! {
            out = f => Ok(out),
            () = stop => Err(Box::new(Control::Interrupted)),
        }
    })
}
