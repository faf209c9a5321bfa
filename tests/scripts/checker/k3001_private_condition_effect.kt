request log(line: string) -> null

agent audit() -> null with log | prelude.throw[env.missing_secret] {
  let role = env.get_secret(key = "ROLE")
  if (role == "admin") { log(line = "admin logged in") }
  null
}

agent main() -> null with log | prelude.throw[env.missing_secret] { audit() }
