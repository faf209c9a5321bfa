agent main() -> integer with io | prelude.throw[env.missing_secret | http.fetch_error] {
  let token = env.get_secret(key = "URL")
  let response = http.fetch(url = token, method = "GET", headers = record.empty(), body = "")
  response.status
}
