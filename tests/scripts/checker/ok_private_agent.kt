// A private agent may use secrets freely; its result is private, so it is returned as private.
private agent redact(secret: string of private) -> string {
  let shown = string.slice(value = secret, start = 0, end = 2)
  f"${shown}…"
}

agent main() -> string of private with prelude.throw[env.missing_secret] {
  redact(secret = env.get_secret(key = "TOKEN"))
}
