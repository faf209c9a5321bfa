// A partial application that captures a private argument for a public parameter of a pure callee
// has a residual whose result is private (`language.md` §7.7 rule 2, §9.8); declared so, it checks,
// also when the secret reaches the callee through a record field or an array element.
agent scale(factor: number, value: number) -> number { factor * value }
agent scale_by(opts: { factor: number }, value: number) -> number { opts.factor * value }
agent total(xs: array[number], value: number) -> number { array.length(target = xs) * value }

agent partial(secret: number of private) -> agent (value: number) -> number of private {
  scale(factor = secret, value = _)
}

agent through_field(cfg: { factor: number } of private) -> agent (value: number) -> number of private {
  scale(factor = cfg.factor, value = _)
}

agent through_record(secret: number of private) -> agent (value: number) -> number of private {
  scale_by(opts = { factor = secret }, value = _)
}

agent through_array(secret: number of private) -> agent (value: number) -> number of private {
  total(xs = [secret, 1], value = _)
}

// A public argument captured leaves the result public, and a secret passed later through the
// residual's own parameter makes only that call's result private.
agent public_residual() -> agent (value: number) -> number { scale(factor = 2, value = _) }

agent main(secret: number of private) -> number of private {
  let f = partial(secret = secret)
  let g = public_residual()
  f(value = 2) + g(value = secret)
}
