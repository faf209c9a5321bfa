//! The OAuth credential store as the runtime sees it (`host.md` §13): the host keeps
//! credentials in its database; the runtime reads them on each token access, refreshes them,
//! and writes refreshed tokens back with a compare-and-set on the generation.

/// One stored credential: the JSON of `host.md` §13.1.7 —
/// `{"tokens": {...}, "client_information": {...}, "resource_url": URL, "obtained_at": RFC3339}` —
/// and the generation it was read at.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredCredential {
    pub generation: i64,
    pub credential: serde_json::Value,
}

/// Persistent OAuth credentials by name.
pub trait CredentialStore: Send + Sync {
    /// The credential called `name`, if any.
    fn load(&self, name: &str) -> Result<Option<StoredCredential>, String>;
    /// Replaces the credential `name` with `credential` only if its generation is still
    /// `generation` (then it becomes `generation + 1`). `Ok(false)`: a newer login won; the caller
    /// discards its refreshed tokens and loads again.
    fn update(
        &self,
        name: &str,
        generation: i64,
        credential: &serde_json::Value,
    ) -> Result<bool, String>;
}
