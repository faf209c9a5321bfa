// The `http` module (`prelude.md` §11): an HTTP client. Any response, including 4xx and 5xx, is
// a normal result of `fetch`; only a request that gets no response throws.

@"An HTTP request that produced no response (bad URL, DNS failure, refused connection, TLS failure, timeout, ...)."
data fetch_error(message: string)

@"Performs one HTTP request and returns its status, response headers (lower-cased names) and body. Header values are the one place secrets may go."
external agent fetch(
  url: string,
  method: string,
  @"Request headers; their values are sent revealed, so they may be secrets."
  headers: record[string of private],
  body: string,
) -> { status: integer, headers: record[string], body: string } with prelude.throw[fetch_error] from "http"

@"A response to `post_json` whose status is not 2xx; it carries the status and the response body."
data status_error(status: integer, body: string)

@"POSTs a JSON body with a `Content-Type: application/json` header beneath the caller's headers; returns the body of a 2xx response and throws `status_error` otherwise."
agent post_json(
  url: string,
  body: string,
  headers: record[string of private],
) -> string with io | prelude.throw[status_error | fetch_error] {
  let effective_headers = record.merge(
    left = record.set(target = record.empty(), key = "Content-Type", value = "application/json"),
    right = headers,
  )
  let response = fetch(url = url, method = "POST", headers = effective_headers, body = body)
  if (response.status >= 200 && response.status < 300) {
    response.body
  } else {
    prelude.throw(error = status_error(status = response.status, body = response.body))
  }
}
