agent main() -> integer of private with prelude.throw[env.missing_secret] {
  let token: string = env.get_secret(key = "TOKEN")
  string.length(value = token)
}
