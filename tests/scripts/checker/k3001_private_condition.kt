agent is_admin() -> boolean with prelude.throw[env.missing_secret] {
  let role = env.get_secret(key = "ROLE")
  if (role == "admin") { true } else { false }
}

agent main() -> boolean with prelude.throw[env.missing_secret] { is_admin() }
