//! The thread log: where the engine writes a turn as it happens (`host.md` §7.9.5–6) and reads
//! the complete turns it sends to the model (§7.10.2). The host implements it over `katari.db`;
//! the engine never sees SQL.

use crate::message::Message;

/// A failure of the thread log, with the message shown to the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError(pub String);

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LogError {}

/// One turn being written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRef {
    pub thread_id: String,
    /// The turn number, increasing within the thread.
    pub turn: i64,
}

/// Where a chat's thread lives.
pub trait ThreadLog: Send + Sync {
    /// The complete turns of the thread in order, each as its messages in order. Incomplete turns
    /// (pending or error rows) are left out, so the pairing invariant holds for what is returned.
    fn history(&self, thread_id: &str) -> Result<Vec<Vec<Message>>, LogError>;

    /// Starts the next turn of the thread by writing its user message (`pending`, with this
    /// process as the writer). `project` is the project lens the turn runs under.
    fn begin_turn(
        &self,
        thread_id: &str,
        project: Option<&str>,
        user: &Message,
    ) -> Result<TurnRef, LogError>;

    /// Appends one message to the turn (`pending`).
    fn append(
        &self,
        turn: &TurnRef,
        project: Option<&str>,
        message: &Message,
    ) -> Result<(), LogError>;

    /// Marks every row of the turn `complete`, in one transaction.
    fn commit_turn(&self, turn: &TurnRef) -> Result<(), LogError>;

    /// Marks every row of the turn `error`, recording why.
    fn fail_turn(&self, turn: &TurnRef, error: &str) -> Result<(), LogError>;
}
