// A partial application that captures a private argument for a public parameter of a pure callee
// has a residual whose result is private (`language.md` §7.7 rule 2, §9.8), so giving the residual
// a public result is K3001: as the declared result, in a `let` annotation, in a `return` and
// through a local. The note names the captured argument.
agent scale(factor: number, value: number) -> number { factor * value }

agent partial(secret: number of private) -> agent (value: number) -> number {
  scale(factor = secret, value = _)
}

agent annotated(secret: number of private) -> number of private {
  let f: agent (value: number) -> number = scale(factor = secret, value = _)
  f(value = 2)
}

agent returned(secret: number of private, early: boolean) -> agent (value: number) -> number {
  if (early) {
    return scale(factor = secret, value = _)
  }
  scale(factor = 1, value = _)
}

agent through_local(secret: number of private) -> agent (value: number) -> number {
  let f = scale(factor = secret, value = _)
  f
}
