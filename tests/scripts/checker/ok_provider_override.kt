// A provider whose continuation row overrides an entry of its effect generic (§9.20).
request get_key() -> string of private

agent with_key[R, effect E](key: string of private,
    continuation: agent (value: null) -> R with {...E, get_key}) -> R with E {
  use handler { request get_key() { next key } }
  continuation(value = null)
}

request log(line: string) -> null

agent main() -> integer with log {
  use with_key(key = "secret")
  let k = get_key()
  log(line = "using the key")
  string.length(value = "x")
}
