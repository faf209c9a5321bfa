//! `prelude.http` (`prelude.md` §11): one HTTP request per `fetch`, on the calling thread.
//!
//! Any response, including 4xx and 5xx, is a normal result; a request that gets no response
//! throws `fetch_error` whose message starts with `http.fetch: ` and never contains a header
//! value (header values are the one place secrets may go, revealed to the server only).

use std::sync::OnceLock;
use std::time::Duration;

use indexmap::IndexMap;
use katari_runtime::control::Ctl;
use katari_runtime::machine::Ctx;
use katari_runtime::value::{V, Value, record_with_capacity};
use reqwest::blocking::Client;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};

use super::{Args, Kind, R, natives, throw};

natives! {
    "prelude.http.fetch" ["url", "method", "headers", "body"] Kind::Io(&["headers"]) => fetch;
}

/// How long connecting may take; there is no overall timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How many redirects are followed.
const MAX_REDIRECTS: usize = 20;

/// One client for the process, so connections are pooled. It is never dropped, which matters:
/// a blocking client must not be dropped inside an async runtime.
fn client() -> Result<&'static Client, String> {
    static CLIENT: OnceLock<Result<Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .timeout(None::<Duration>)
                .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
                .build()
                .map_err(|e| describe(&e))
        })
        .as_ref()
        .map_err(Clone::clone)
}

use katari_runtime::describe_error as describe;

fn fetch(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    match request(a) {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(reason)) => Err(throw(
            ctx,
            "prelude.http.fetch_error",
            vec![Value::str(format!("http.fetch: {reason}"))],
        )),
        Err(ctl) => Err(ctl),
    }
}

/// Sends the request: the response value, a reason for `fetch_error`, or a panic for an argument
/// of the wrong kind.
fn request(a: &Args<'_>) -> Result<Result<Value, String>, Ctl> {
    let (url, method, body) = (a.str(0)?, a.str(1)?, a.str(3)?);
    let headers = a.record(2)?;
    let mut header_map = HeaderMap::new();
    for (name, value) in headers.iter() {
        let V::Str(text) = &value.v else {
            return Err(a.fail(format_args!(
                "expected a value of type string for headers.{name}, got {}",
                value.describe()
            )));
        };
        let Ok(header) = HeaderName::from_bytes(name.as_bytes()) else {
            return Ok(Err(format!("invalid header name \"{name}\"")));
        };
        let Ok(text) = HeaderValue::from_bytes(text.as_bytes()) else {
            return Ok(Err(format!("invalid value for the header \"{name}\"")));
        };
        header_map.append(header, text);
    }
    Ok(send(url, method, header_map, body))
}

fn send(url: &str, method: &str, headers: HeaderMap, body: &str) -> Result<Value, String> {
    let parsed = Url::parse(url).map_err(|e| format!("invalid URL \"{url}\": {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "unsupported URL scheme \"{}\" (only http and https)",
            parsed.scheme()
        ));
    }
    let verb = Method::from_bytes(method.as_bytes())
        .map_err(|_| format!("invalid method \"{method}\""))?;
    let mut builder = client()?.request(verb, parsed).headers(headers);
    let bodiless = method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD");
    if !bodiless {
        builder = builder.body(body.to_string());
    }
    let response = builder.send().map_err(|e| describe(&e))?;
    let status = response.status().as_u16();
    let mut joined: IndexMap<String, String> = IndexMap::new();
    for (name, value) in response.headers() {
        let text = String::from_utf8_lossy(value.as_bytes());
        joined
            .entry(name.as_str().to_string())
            .and_modify(|all| {
                all.push_str(", ");
                all.push_str(&text);
            })
            .or_insert_with(|| text.into_owned());
    }
    let bytes = response.bytes().map_err(|e| describe(&e))?;
    let mut result = record_with_capacity(3);
    result.insert("status".into(), Value::int(f64::from(status)));
    result.insert(
        "headers".into(),
        Value::record(
            joined
                .into_iter()
                .map(|(k, v)| (k.into(), Value::str(v)))
                .collect(),
        ),
    );
    result.insert(
        "body".into(),
        Value::str(String::from_utf8_lossy(&bytes).into_owned()),
    );
    Ok(Value::record(result))
}
