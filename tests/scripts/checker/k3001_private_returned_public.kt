agent main() -> integer with prelude.throw[env.missing_secret] {
  let token = env.get_secret(key = "TOKEN")
  string.length(value = token)
}
