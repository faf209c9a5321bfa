//! `prelude.http` (`prelude.md` §11): one HTTP request per `fetch`.
//!
//! Any response, including 4xx and 5xx, is a normal result; a request that gets no response
//! throws `fetch_error` whose message starts with `http.fetch: ` and never contains a header
//! value (header values are the one place secrets may go, revealed to the server only).
//!
//! The request runs on the reactor through [`reactor::block_on`] rather than on a blocking
//! client: there is no overall timeout, so a server that never answers would otherwise keep the
//! evaluator thread forever, even after its `parallel` branch was cancelled (`language.md`
//! §9.17). Through `block_on`, cancellation and Ctrl-C drop the request.

use std::sync::OnceLock;
use std::time::Duration;

use indexmap::IndexMap;
use katari_runtime::control::Ctl;
use katari_runtime::machine::Ctx;
use katari_runtime::reactor;
use katari_runtime::value::{V, Value, record_with_capacity};
use reqwest::header::{CONTENT_LENGTH, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Method, Url};

use super::{Args, Kind, R, natives, throw};

natives! {
    "prelude.http.fetch" ["url", "method", "headers", "body"] Kind::Io(&["headers"]) => fetch;
}

/// How long connecting may take; there is no overall timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How many redirects are followed.
const MAX_REDIRECTS: usize = 20;

/// One client for the process, so connections are pooled (on the reactor, the only runtime that
/// ever drives it).
fn client() -> Result<&'static Client, String> {
    static CLIENT: OnceLock<Result<Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
                .build()
                .map_err(|e| describe(&e))
        })
        .as_ref()
        .map_err(Clone::clone)
}

use katari_runtime::describe_error as describe;

fn fetch(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let outcome = match request(a)? {
        Ok(request) => reactor::block_on(ctx, send(request))?,
        Err(reason) => Err(reason),
    };
    match outcome {
        Ok(response) => Ok(response),
        Err(reason) => Err(throw(
            ctx,
            "prelude.http.fetch_error",
            vec![Value::str(format!("http.fetch: {reason}"))],
        )),
    }
}

/// Builds the request: a reason for `fetch_error` when it cannot be sent, or a panic for an
/// argument of the wrong kind.
fn request(a: &Args<'_>) -> Result<Result<reqwest::Request, String>, Ctl> {
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
    Ok(build(url, method, header_map, body))
}

fn build(
    url: &str,
    method: &str,
    headers: HeaderMap,
    body: &str,
) -> Result<reqwest::Request, String> {
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
    let mut request = builder.build().map_err(|e| describe(&e))?;
    if !bodiless {
        // The length is stated even for an empty body (hyper would leave it out), as servers
        // that require it on POST and PUT expect; it replaces any length the caller wrote, which
        // could only make the server misread the body.
        request
            .headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
    }
    Ok(request)
}

/// Sends the request and reads the whole response.
async fn send(request: reqwest::Request) -> Result<Value, String> {
    let response = client()?.execute(request).await.map_err(|e| describe(&e))?;
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
    let bytes = response.bytes().await.map_err(|e| describe(&e))?;
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
