data oops(message: string)
data fail(message: string)

agent risky(n: integer) -> integer with prelude.throw[oops | fail] {
  if (n > 0) { prelude.throw(error = oops(message = "big")) } else { prelude.throw(error = fail(message = "small")) }
}

agent main() -> integer {
  use handler {
    request prelude.throw(error: oops) -> never { break 0 }
  }
  risky(n = 1)
}
