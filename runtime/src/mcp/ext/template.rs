//! RFC 6570 URI templates at level 1 (`host.md` §10.7.1), for reading a resource template:
//! each `{name}` is replaced by its value with every byte outside the unreserved characters
//! (`A-Z a-z 0-9 - . _ ~`) percent-encoded. Operators, modifiers and lists (levels 2–4) are
//! refused rather than half-supported, so a URI is never built differently from what the
//! server's template means.

use std::fmt;

/// Why a template cannot be expanded. `Display` gives the messages of `host.md` §10.7.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// An expression that needs RFC 6570 beyond level 1 (`{+path}`, `{?q}`, `{a,b}`, `{x*}`,
    /// `{x:3}`); carries the template and the whole expression with its braces.
    BeyondLevel1 {
        template: String,
        expression: String,
    },
    /// No value for a variable; carries the template and the variable's name.
    Missing { template: String, name: String },
    /// A `{` without its `}`, a `}` without its `{`, or an empty or invalid variable name.
    Malformed { template: String, problem: String },
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::BeyondLevel1 {
                template,
                expression,
            } => write!(
                f,
                "Resource template '{template}' uses '{expression}', which needs RFC 6570 beyond level 1; only simple {{name}} substitution is supported."
            ),
            TemplateError::Missing { template, name } => write!(
                f,
                "Resource template '{template}' needs a value for '{name}' in arguments."
            ),
            TemplateError::Malformed { template, problem } => {
                write!(f, "Resource template '{template}' is malformed: {problem}.")
            }
        }
    }
}

impl std::error::Error for TemplateError {}

/// One piece of a parsed template.
enum Part<'t> {
    Literal(&'t str),
    Variable(&'t str),
}

/// Whether `uri` is a template (it contains `{`), as `host.md` §10.7.1 decides.
pub fn is_template(uri: &str) -> bool {
    uri.contains('{')
}

/// The variables of a level-1 template in order of first appearance (for describing a
/// template); an error when the template is not level 1.
pub fn variables(template: &str) -> Result<Vec<&str>, TemplateError> {
    let mut names: Vec<&str> = Vec::new();
    for part in parse(template)? {
        if let Part::Variable(name) = part
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    Ok(names)
}

/// Expands a level-1 template with the values `lookup` gives; unused values are ignored.
pub fn expand<'a>(
    template: &str,
    lookup: impl Fn(&str) -> Option<&'a str>,
) -> Result<String, TemplateError> {
    let parts = parse(template)?;
    let mut out = String::with_capacity(template.len());
    for part in parts {
        match part {
            Part::Literal(text) => out.push_str(text),
            Part::Variable(name) => {
                let value = lookup(name).ok_or_else(|| TemplateError::Missing {
                    template: template.to_string(),
                    name: name.to_string(),
                })?;
                encode_into(&mut out, value);
            }
        }
    }
    Ok(out)
}

/// Appends `value` with every byte outside the unreserved set as `%XX` (upper-case hex).
fn encode_into(out: &mut String, value: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in value.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
    }
}

/// Splits a template into literals and level-1 variables.
fn parse(template: &str) -> Result<Vec<Part<'_>>, TemplateError> {
    let malformed = |problem: &str| TemplateError::Malformed {
        template: template.to_string(),
        problem: problem.to_string(),
    };
    let mut parts = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        let open = rest.find('{');
        let close = rest.find('}');
        match (open, close) {
            (None, None) => {
                parts.push(Part::Literal(rest));
                break;
            }
            (None, Some(_)) => return Err(malformed("a '}' has no matching '{'")),
            (Some(o), Some(c)) if c < o => {
                return Err(malformed("a '}' has no matching '{'"));
            }
            (Some(_), None) => return Err(malformed("a '{' is never closed")),
            (Some(o), Some(c)) => {
                if o > 0 {
                    parts.push(Part::Literal(&rest[..o]));
                }
                let body = &rest[o + 1..c];
                if body.contains('{') {
                    return Err(malformed("a '{' is never closed"));
                }
                let expression = &rest[o..=c];
                let beyond = || TemplateError::BeyondLevel1 {
                    template: template.to_string(),
                    expression: expression.to_string(),
                };
                // Operators (level 2 and 3, plus the ones RFC 6570 reserves), lists (level 3)
                // and modifiers (level 4).
                if body.starts_with(['+', '#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|'])
                    || body.contains([',', '*', ':'])
                {
                    return Err(beyond());
                }
                if body.is_empty() {
                    return Err(malformed("'{}' names no variable"));
                }
                if !valid_name(body) {
                    return Err(malformed(&format!(
                        "'{expression}' is not a valid variable name (letters, digits, '_', '.' and %XX escapes)"
                    )));
                }
                parts.push(Part::Variable(body));
                rest = &rest[c + 1..];
            }
        }
    }
    Ok(parts)
}

/// RFC 6570 `varname`: `varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let mut i = 0;
    let mut after_dot = true;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || b == b'_' {
            after_dot = false;
            i += 1;
        } else if b == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            after_dot = false;
            i += 3;
        } else if b == b'.' && !after_dot {
            after_dot = true;
            i += 1;
        } else {
            return false;
        }
    }
    !after_dot
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }

    #[test]
    fn level_one_variables_are_substituted_and_percent_encoded() {
        let uri = expand(
            "repo://{owner}/{repo}/files/{path}",
            with(&[
                ("owner", "katari"),
                ("repo", "main"),
                ("path", "a b/c?d=é~x.y_z-"),
                ("unused", "ignored"),
            ]),
        )
        .expect("level 1");
        assert_eq!(
            uri,
            "repo://katari/main/files/a%20b%2Fc%3Fd%3D%C3%A9~x.y_z-"
        );
        assert_eq!(
            variables("repo://{owner}/{repo}/{owner}").expect("level 1"),
            ["owner", "repo"]
        );
        assert_eq!(
            expand("plain://uri", with(&[])).expect("no vars"),
            "plain://uri"
        );
        assert_eq!(
            expand("{a.b}{c}", with(&[("a.b", "1"), ("c", "")])).expect("ok"),
            "1"
        );
    }

    #[test]
    fn operators_modifiers_and_lists_are_refused_with_the_expression() {
        for (template, expression) in [
            ("file:///{+path}", "{+path}"),
            ("x://{#frag}", "{#frag}"),
            ("x://{.ext}", "{.ext}"),
            ("x://a{/seg}", "{/seg}"),
            ("x://a{;p}", "{;p}"),
            ("x://a{?q,r}", "{?q,r}"),
            ("x://a?x=1{&q}", "{&q}"),
            ("x://{a,b}", "{a,b}"),
            ("x://{list*}", "{list*}"),
            ("x://{name:3}", "{name:3}"),
        ] {
            let error = expand(template, with(&[])).expect_err(template);
            assert_eq!(
                error.to_string(),
                format!(
                    "Resource template '{template}' uses '{expression}', which needs RFC 6570 beyond level 1; only simple {{name}} substitution is supported."
                )
            );
        }
    }

    #[test]
    fn a_missing_value_names_the_variable() {
        let error = expand("x://{a}/{b}", with(&[("a", "1")])).expect_err("b is missing");
        assert_eq!(
            error.to_string(),
            "Resource template 'x://{a}/{b}' needs a value for 'b' in arguments."
        );
    }

    #[test]
    fn malformed_templates_say_what_is_wrong() {
        for (template, problem) in [
            ("x://{a", "a '{' is never closed"),
            ("x://a}", "a '}' has no matching '{'"),
            ("x://{}", "'{}' names no variable"),
            ("x://{a{b}", "a '{' is never closed"),
        ] {
            assert_eq!(
                expand(template, with(&[])).expect_err(template).to_string(),
                format!("Resource template '{template}' is malformed: {problem}.")
            );
        }
        assert!(matches!(
            expand("x://{a-b}", with(&[])),
            Err(TemplateError::Malformed { .. })
        ));
    }
}
