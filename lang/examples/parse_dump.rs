//! Debug aid: parses the files named on the command line and prints their diagnostics.
fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let parsed = katari_lang::parser::parse(katari_lang::source::FileId(0), &text);
        let codes: Vec<_> = parsed
            .diagnostics
            .iter()
            .map(|d| {
                format!(
                    "{}@{:?}: {}",
                    d.code.as_str(),
                    d.primary.as_ref().map(|l| l.span),
                    d.message
                )
            })
            .collect();
        println!("{path}: {} decls {:?}", parsed.module.decls.len(), codes);
    }
}
