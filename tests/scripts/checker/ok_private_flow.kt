// Attributes (§7.7): `of private` parameters absorb secrets, pure calls lift privacy to their result.
agent main() -> { status: integer, length: integer of private } with io | prelude.throw[env.missing_secret | http.fetch_error] {
  let token = env.get_secret(key = "TOKEN")
  let headers = record.set(target = record.empty(), key = "Authorization", value = f"Bearer ${token}")
  let response = http.fetch(url = "https://example.org", method = "GET", headers = headers, body = "")
  let auth = mcp.headers(values = headers)
  let length = string.length(value = token)
  let doubled = length * 2
  { status = response.status, length = doubled }
}
