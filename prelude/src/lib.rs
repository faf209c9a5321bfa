//! The prelude's `.kt` declaration files, embedded in the interpreter and listed in one table.
//!
//! Each file is parsed and checked like a user module at startup (`prelude.md` §0); the natives
//! behind its `primitive agent` and `external agent` declarations are in [`natives`].

pub mod natives;
pub mod reference;

/// One embedded prelude module: its module name (`prelude.array`), the path shown in diagnostics (`<prelude>/prelude/array.kt`), and its text.
#[derive(Debug, Clone, Copy)]
pub struct PreludeFile {
    /// The module name, such as `prelude` or `prelude.array`.
    pub module: &'static str,
    /// The path shown in diagnostics, such as `<prelude>/prelude/array.kt`.
    pub path: &'static str,
    /// The source text of the module.
    pub text: &'static str,
}

/// Declares one [`PreludeFile`] from a module name and the file's path below `kt/`, keeping the
/// module name, the diagnostic path and the embedded file in step.
macro_rules! prelude_file {
    ($module:literal, $file:literal) => {
        PreludeFile {
            module: $module,
            path: concat!("<prelude>/", $file),
            text: include_str!(concat!("../kt/", $file)),
        }
    };
}

/// Every prelude module: the root `prelude` first, then its submodules in the order of
/// `prelude.md` §1.
pub const FILES: &[PreludeFile] = &[
    prelude_file!("prelude", "prelude.kt"),
    prelude_file!("prelude.array", "prelude/array.kt"),
    prelude_file!("prelude.string", "prelude/string.kt"),
    prelude_file!("prelude.math", "prelude/math.kt"),
    prelude_file!("prelude.record", "prelude/record.kt"),
    prelude_file!("prelude.json", "prelude/json.kt"),
    prelude_file!("prelude.reflection", "prelude/reflection.kt"),
    prelude_file!("prelude.env", "prelude/env.kt"),
    prelude_file!("prelude.http", "prelude/http.kt"),
    prelude_file!("prelude.file", "prelude/file.kt"),
    prelude_file!("prelude.webhook", "prelude/webhook.kt"),
    prelude_file!("prelude.mcp", "prelude/mcp.kt"),
    prelude_file!("prelude.console", "prelude/console.kt"),
    prelude_file!("prelude.time", "prelude/time.kt"),
];

/// [`FILES`] in the form the loader takes.
pub fn sources() -> Vec<katari_lang::load::PreludeSource<'static>> {
    FILES
        .iter()
        .map(|f| katari_lang::load::PreludeSource {
            module: f.module,
            path: f.path,
            text: f.text,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::FILES;
    use std::collections::HashSet;

    #[test]
    fn there_are_fourteen_modules() {
        assert_eq!(FILES.len(), 14);
    }

    #[test]
    fn sources_keep_every_module_in_order() {
        let sources = super::sources();
        let modules: Vec<&str> = sources.iter().map(|s| s.module).collect();
        let expected: Vec<&str> = FILES.iter().map(|f| f.module).collect();
        assert_eq!(modules, expected);
        assert_eq!(sources[0].module, "prelude");
    }

    #[test]
    fn every_file_has_text() {
        for file in FILES {
            assert!(!file.text.trim().is_empty(), "{} is empty", file.path);
        }
    }

    #[test]
    fn module_names_are_unique() {
        let mut seen = HashSet::new();
        for file in FILES {
            assert!(seen.insert(file.module), "{} is listed twice", file.module);
        }
    }

    #[test]
    fn paths_follow_module_names() {
        for file in FILES {
            let expected = format!("<prelude>/{}.kt", file.module.replace('.', "/"));
            assert_eq!(file.path, expected, "path of {}", file.module);
        }
    }
}
