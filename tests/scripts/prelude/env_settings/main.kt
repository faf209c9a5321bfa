// `env.get_all` (prelude.md §10) returns the `[env]` table of the project's katari.toml as
// public strings; `env.get_secret` looks in the environment (an empty value counts as present)
// and throws `missing_secret` with the exact message otherwise.

agent secret(key: string) -> string {
  use handler {
    request prelude.throw(error: env.missing_secret) -> never { break f"missing_secret(key = ${error.key}): ${error.message}" }
  }
  let value = env.get_secret(key = key)
  "present"
}

agent main() -> null {
  let settings = env.get_all()
  console.print(text = f"keys: ${json.to_text(value = record.keys(target = settings))}")
  console.print(text = f"region: ${json.to_text(value = record.get(target = settings, key = "region"))}")
  console.print(text = f"set: ${secret(key = "PRELUDE_GOLDEN_SET")}")
  console.print(text = f"set to the empty string: ${secret(key = "PRELUDE_GOLDEN_EMPTY")}")
  console.print(text = f"unset: ${secret(key = "PRELUDE_GOLDEN_SURELY_UNSET")}")
}
