//! Diagnostics as plain data: a code, a severity, a message, labelled spans, notes and help.
//!
//! Every stage reports through this one type; `render` turns it into text in one place.

use crate::source::{FileId, Span};

#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! codes {
    ($($code:ident => $sev:ident, $what:literal;)*) => {
        /// The diagnostic codes of `language.md` §12.2.
        #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
        pub enum Code { $($code,)* }

        impl Code {
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$code => stringify!($code),)* }
            }

            /// The severity the code carries by definition.
            pub fn severity(self) -> Severity {
                match self { $(Code::$code => Severity::$sev,)* }
            }

            /// A one-line description of what the code means.
            pub fn meaning(self) -> &'static str {
                match self { $(Code::$code => $what,)* }
            }

            pub const ALL: &'static [Code] = &[$(Code::$code,)*];
        }
    };
}

codes! {
    K1001 => Error, "syntax error";
    K1002 => Warning, "integer literal beyond 2^53-1";
    K2001 => Error, "undefined name";
    K2002 => Error, "undefined module member";
    K2003 => Error, "duplicate name";
    K2004 => Error, "neither a value nor a module";
    K2005 => Error, "imported module not found";
    K2006 => Error, "imported name not found";
    K2007 => Error, "`with` names no `var` of the targeted construct";
    K2008 => Error, "user module named `prelude`";
    K3001 => Error, "subtype failure";
    K3005 => Error, "invariant instantiations cannot be joined";
    K3006 => Error, "invariant instantiations cannot be met";
    K3007 => Error, "kind mismatch";
    K3009 => Error, "wrong number of type arguments";
    K3010 => Error, "type synonym cycle";
    K3011 => Error, "malformed type";
    K3012 => Error, "misplaced jump";
    K3013 => Error, "missing annotation";
    K3014 => Error, "expected shape";
    K3015 => Error, "generic value used without application";
    K3016 => Error, "generic cannot be inferred";
    K3017 => Error, "wrong reference kind";
    K3018 => Error, "unknown reactor";
    K3019 => Error, "malformed `use`";
    K3020 => Error, "hole label is not a parameter";
    K4001 => Error, "construct not supported by the evaluator";
    K5001 => Error, "foreign-function interface not supported";
    K5002 => Error, "no native implementation registered";
    K5003 => Error, "ambiguous module";
    K5004 => Error, "invalid katari.toml";
    K5005 => Error, "entry not runnable";
    K5006 => Error, "source file unreadable or not valid UTF-8";
}

/// A span inside a particular file, with the text shown next to it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is. A diagnostic without a location (an unreadable file) has `None`.
    pub primary: Option<Label>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's own severity, pointing at `span` in `file`.
    pub fn new(code: Code, message: impl Into<String>, file: FileId, span: Span) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            primary: Some(Label {
                file,
                span,
                message: String::new(),
            }),
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// A diagnostic that concerns a whole file or no file at all.
    pub fn unlocated(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// Sets the text under the primary caret.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(label) = &mut self.primary {
            label.message = message.into();
        }
        self
    }

    pub fn with_secondary(
        mut self,
        file: FileId,
        span: Span,
        message: impl Into<String>,
    ) -> Diagnostic {
        self.secondary.push(Label {
            file,
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Sets the help line of a diagnostic already pushed into a list.
    pub fn set_help(&mut self, help: impl Into<String>) -> &mut Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Sets the text under the primary caret of a diagnostic already pushed into a list.
    pub fn set_label(&mut self, message: impl Into<String>) -> &mut Diagnostic {
        if let Some(label) = &mut self.primary {
            label.message = message.into();
        }
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A growing list of diagnostics for one file, handed down a stage.
#[derive(Debug, Default)]
pub struct Sink {
    pub diagnostics: Vec<Diagnostic>,
}

impl Sink {
    pub fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}
