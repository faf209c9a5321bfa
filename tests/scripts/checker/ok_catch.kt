// `prelude.catch` infers `Err` from the body's throws and leaves `E` without them.
data oops(message: string)
request tick() -> integer

agent risky(n: integer) -> integer with tick | prelude.throw[oops] {
  if (n > tick()) { prelude.throw(error = oops(message = "too big")) } else { n }
}

agent attempt() -> integer | oops with tick {
  prelude.catch(body = agent () -> integer with tick | prelude.throw[oops] { risky(n = 3) })
}

agent main() -> string {
  use handler { request tick() { next 1 } }
  match (attempt()) {
    case oops(message) -> message
    case n -> string.to_string(value = n)
  }
}
