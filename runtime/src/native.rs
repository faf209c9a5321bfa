//! The interface between the evaluator and native implementations of prelude declarations:
//! one table of functions registered under qualified names (`prelude.array.get`).

use std::collections::HashMap;

use crate::control::Ctl;
use crate::machine::Ctx;
use crate::value::Value;

/// The arguments of one native call.
pub struct NativeCall<'a> {
    /// The arguments in declared parameter order, defaults already applied.
    pub args: &'a mut [Value],
    /// The JSON Schemas of the call's type arguments, in generic order (empty when the
    /// declaration is not generic). `json.decode[T]` reads `schemas[0]`.
    pub schemas: &'a [serde_json::Value],
}

pub type NativeFn = fn(&mut Ctx, NativeCall<'_>) -> Result<Value, Ctl>;

/// Every native, by qualified name.
#[derive(Default, Clone)]
pub struct NativeTable {
    entries: Vec<(&'static str, NativeFn)>,
    index: HashMap<&'static str, usize>,
}

impl NativeTable {
    pub fn new() -> NativeTable {
        NativeTable::default()
    }

    /// Registers a native. Registering a name twice is a programming error caught by tests.
    pub fn add(&mut self, name: &'static str, f: NativeFn) {
        self.index.insert(name, self.entries.len());
        self.entries.push((name, f));
    }

    pub fn get(&self, name: &str) -> Option<NativeFn> {
        self.index.get(name).map(|&i| self.entries[i].1)
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|(n, _)| *n)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl std::fmt::Debug for NativeTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|(n, _)| n))
            .finish()
    }
}

impl katari_lang::check::Natives for NativeTable {
    fn has(&self, qualified_name: &str) -> bool {
        self.index.contains_key(qualified_name)
    }
}
