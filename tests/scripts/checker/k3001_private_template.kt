agent banner() -> string with prelude.throw[env.missing_secret] {
  let token = env.get_secret(key = "TOKEN")
  f"token: ${token}"
}

agent main() -> string with prelude.throw[env.missing_secret] { banner() }
