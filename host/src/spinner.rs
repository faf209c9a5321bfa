//! The spinner on stderr while the host connects to MCP servers (`host.md` §2.3.2): drawn only
//! when stderr is a terminal and `TERM` is not `dumb`, and erased before anything else is written.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A running spinner; [`Spinner::stop`] (or dropping it) erases its line.
pub struct Spinner(Option<ProgressBar>);

impl Spinner {
    /// Starts a spinner showing `message`, or nothing when stderr is no suitable terminal.
    pub fn start(message: impl Into<String>) -> Spinner {
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        if dumb || !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            bar.set_style(style.tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ "));
        }
        bar.set_message(message.into());
        bar.enable_steady_tick(Duration::from_millis(80));
        Spinner(Some(bar))
    }

    /// Erases the spinner's line, so the next output starts on a clean line.
    pub fn stop(mut self) {
        self.clear();
    }

    fn clear(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.clear();
    }
}
