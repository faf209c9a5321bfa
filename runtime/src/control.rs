//! Non-local control flow of the evaluator: jumps to their targets, unhandled throws and
//! panics, unanswerable requests and interruption.

use std::sync::Arc;

use crate::value::Value;

/// Why an evaluation did not produce a value. Boxed so that `Result<Value, Ctl>` stays small.
pub type Ctl = Box<Control>;

#[derive(Debug)]
pub enum Control {
    /// `return` to the activation with this id (0: the innermost agent).
    Return { activation: u64, value: Value },
    /// `next` to a `for` iteration or clause invocation, with `var` updates by index.
    Next {
        target: u64,
        value: Value,
        updates: Vec<(u32, Value)>,
    },
    /// `break` to a `for` loop or handler frame.
    Break { target: u64, value: Value },
    /// A throw that no handler caught: fails the run.
    Throw(Value),
    /// A panic raised by a native or an operator, before any ambient clause has seen it. The
    /// evaluator turns it into a search of the handler stack where it surfaces.
    Panic(Arc<str>),
    /// A panic that no ambient clause caught: fails the run.
    Failed(Arc<str>),
    /// A request nobody could answer: fails the run.
    Unhandled { request: Arc<str>, args: Value },
    /// An answer from the answers file that does not conform.
    BadAnswer { request: Arc<str>, failures: String },
    /// Ctrl-C, or the cancellation of a parallel branch.
    Interrupted,
}

/// A panic with a message (§12.3), before any ambient clause has seen it.
pub fn panic(message: impl Into<Arc<str>>) -> Ctl {
    Box::new(Control::Panic(message.into()))
}
