//! `katari mcp pull` (`host.md` §15.1): connects to a server (Streamable HTTP, falling back to
//! legacy HTTP+SSE, through the runtime's MCP client), lists every tool, and writes the typed
//! bindings of [`super::bindings`] atomically.
//!
//! Header values (secret references resolved here, at the point of use) and OAuth tokens go
//! only to the server: the file and every message name header names at most.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use katari_runtime::machine::Host;
use katari_runtime::mcp::client::{self, Auth, Descriptor, McpFailure};
use katari_runtime::mcp::text::sanitize;

use super::bindings;
use crate::host::CliHost;
use crate::paths::Paths;
use crate::spinner::Spinner;

/// What `katari mcp pull` was asked to do.
#[derive(Debug, Clone)]
pub struct PullOptions {
    pub url: String,
    pub out: PathBuf,
    /// `--header` arguments as written (`NAME=VALUE`).
    pub headers: Vec<String>,
    pub oauth: Option<String>,
    pub force: bool,
}

/// A failure: the message (printed after `error: `) and the exit status.
#[derive(Debug)]
struct Fail {
    code: u8,
    message: String,
}

fn usage(message: impl Into<String>) -> Fail {
    Fail {
        code: 2,
        message: message.into(),
    }
}

/// Runs the command; the exit status.
pub fn run(opts: &PullOptions) -> u8 {
    let result = pull(opts);
    // Nothing else is pending: closing now also ends the server's session cleanly.
    client::shutdown();
    match result {
        Ok(summary) => {
            let _ = writeln!(std::io::stderr(), "{summary}");
            0
        }
        Err(fail) => {
            crate::host::print_error(&fail.message);
            fail.code
        }
    }
}

fn pull(opts: &PullOptions) -> Result<String, Fail> {
    // Usage problems are reported before anything touches the network (§2.2: exit 2).
    if !opts.headers.is_empty() && opts.oauth.is_some() {
        return Err(usage("--header and --oauth cannot be combined"));
    }
    check_url(&opts.url)?;
    let paths = Paths::from_env();
    let headers = parse_headers(&opts.headers, &paths.config.join("secrets.toml"))?;
    let shown = opts.out.display().to_string();
    if opts.out.exists() && !opts.force {
        return Err(usage(format!(
            "{shown} exists; pass --force to overwrite it."
        )));
    }

    let auth = match &opts.oauth {
        Some(name) => Auth::OAuth(name.clone()),
        None => Auth::Headers(headers.clone()),
    };
    let descriptor = Arc::new(Descriptor::new(opts.url.clone(), auth));
    let cli_host = Arc::new(CliHost::new(paths, Vec::new(), HashMap::new()));
    let host: Arc<dyn Host> = cli_host.clone();
    let spinner = Spinner::start(format!("Connecting to {}", opts.url));
    let listed = katari_runtime::reactor::runtime()
        .block_on(async { client::list_tools_json(&descriptor, &host).await });
    spinner.stop();
    // A credential database newer than this binary is refused with exit 2 (`host.md` §16.2).
    if let Some(message) = cli_host.fatal() {
        return Err(usage(message));
    }
    let listing = listed.map_err(|failure| {
        let message = match failure {
            McpFailure::Server(m) | McpFailure::Auth(m) => m,
        };
        Fail {
            code: 1,
            message: sanitize(&message),
        }
    })?;

    let generated = bindings::generate(&opts.url, &command_line(opts, &headers), &listing);
    katari_runtime::atomic::write_atomic(&opts.out, generated.text.as_bytes()).map_err(|e| {
        Fail {
            code: 1,
            message: format!("cannot write {shown}: {e}"),
        }
    })?;
    Ok(format!(
        "Wrote {shown}: {} tools ({} with typed output).",
        generated.tools, generated.typed
    ))
}

/// An `http` or `https` URL with a host.
fn check_url(text: &str) -> Result<(), Fail> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(()),
        _ => Err(usage(format!(
            "--url '{}' is not an http:// or https:// URL of an MCP server",
            sanitize(text)
        ))),
    }
}

/// `--header NAME=VALUE` arguments as pairs, `secret:KEY` values replaced by the secret from
/// `secrets.toml` (`host.md` §3.4.1). Messages name the header and the key, never a value.
fn parse_headers(written: &[String], secrets_file: &Path) -> Result<Vec<(String, String)>, Fail> {
    let mut secrets = None;
    let mut headers = Vec::with_capacity(written.len());
    for arg in written {
        let Some((name, value)) = arg.split_once('=') else {
            return Err(usage(format!(
                "--header expects NAME=VALUE, but '{}' has no '='",
                sanitize(arg.split(':').next().unwrap_or_default())
            )));
        };
        let name = name.trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(usage(format!(
                "--header '{}' does not start with a valid header name (NAME=VALUE)",
                sanitize(name)
            )));
        }
        let value = match crate::config::secrets::reference(value) {
            None => value.to_string(),
            Some(key) => {
                if secrets.is_none() {
                    secrets = Some(
                        crate::config::secrets::read(secrets_file)
                            .map_err(|e| usage(e.message().to_string()))?,
                    );
                }
                let found = secrets.as_ref().and_then(|s| s.get(key));
                match found {
                    Some(secret) => secret.to_string(),
                    None => {
                        return Err(usage(format!(
                            "--header {name}: there is no secret named '{key}' in {}\n  fix: add {key} = \"...\" to {}, or pass the value itself",
                            secrets_file.display(),
                            secrets_file.display()
                        )));
                    }
                }
            }
        };
        headers.push((name.to_string(), value));
    }
    Ok(headers)
}

/// The command line the header comment names: header names only, never their values.
fn command_line(opts: &PullOptions, headers: &[(String, String)]) -> String {
    let mut line = format!(
        "katari mcp pull --url {} --out {}",
        opts.url,
        opts.out.display()
    );
    for (name, _) in headers {
        line.push_str(&format!(" --header {name}=<hidden>"));
    }
    if let Some(name) = &opts.oauth {
        line.push_str(&format!(" --oauth {name}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(headers: &[&str], oauth: Option<&str>) -> PullOptions {
        PullOptions {
            url: "http://127.0.0.1:1/mcp".into(),
            out: PathBuf::from("out.kt"),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            oauth: oauth.map(str::to_string),
            force: false,
        }
    }

    #[test]
    fn headers_and_oauth_are_a_usage_error() {
        let fail = pull(&opts(&["X-Key=1"], Some("gh"))).expect_err("refused");
        assert_eq!(fail.code, 2);
        assert_eq!(fail.message, "--header and --oauth cannot be combined");
    }

    #[test]
    fn a_header_needs_a_name_and_an_equals_sign() {
        let none = Path::new("/nonexistent/secrets.toml");
        let fail = parse_headers(&["Authorization: Bearer x".into()], none).expect_err("no =");
        assert_eq!(fail.code, 2);
        assert!(!fail.message.contains("Bearer"), "{}", fail.message);
        let fail = parse_headers(&["=v".into()], none).expect_err("no name");
        assert_eq!(fail.code, 2);
        let ok = parse_headers(&["X-Key=a=b".into()], none).expect("valid");
        assert_eq!(ok, vec![("X-Key".to_string(), "a=b".to_string())]);
    }

    #[test]
    fn the_header_line_names_headers_but_not_values() {
        let o = opts(&[], Some("gh"));
        let line = command_line(&o, &[("X-Key".into(), "s3cret".into())]);
        assert_eq!(
            line,
            "katari mcp pull --url http://127.0.0.1:1/mcp --out out.kt --header X-Key=<hidden> --oauth gh"
        );
    }

    #[test]
    fn only_http_urls_are_pulled() {
        assert!(check_url("https://example.org/mcp").is_ok());
        assert!(check_url("http://127.0.0.1:3000/mcp").is_ok());
        assert_eq!(check_url("mcp:github").map_err(|f| f.code).err(), Some(2));
        assert_eq!(check_url("ftp://x/").map_err(|f| f.code).err(), Some(2));
    }
}
