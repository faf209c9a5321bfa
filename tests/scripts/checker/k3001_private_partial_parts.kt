// The private value captured by a partial application may reach the pure callee through a field
// of a private record (`language.md` §7.7 rule 1), inside a record argument or as an array
// element: the residual's result is private all the same, so a public result is K3001.
agent scale(factor: number, value: number) -> number { factor * value }
agent scale_by(opts: { factor: number }, value: number) -> number { opts.factor * value }
agent total(xs: array[number], value: number) -> number { array.length(target = xs) * value }

agent through_field(cfg: { factor: number } of private) -> agent (value: number) -> number {
  scale(factor = cfg.factor, value = _)
}

agent through_record(secret: number of private) -> agent (value: number) -> number {
  scale_by(opts = { factor = secret }, value = _)
}

agent through_array(secret: number of private) -> agent (value: number) -> number {
  total(xs = [secret, 1], value = _)
}
