// The integer tier (runtime/src/tier.rs): agents that compute only with integers run over
// unboxed numbers, and give up to the tree walker wherever its rules decide (overflow to a
// non-finite number, remainders by zero, the call depth limit). Results must be exactly the tree
// walker's: kinds, negative zero, rounding beyond 2^53, floor modulo, eager `&&`, panics.
agent pow2(k: integer) -> integer with pure {
  if (k == 0) { 1 } else { 2 * pow2(k = k - 1) }
}

agent big(k: integer) -> integer with pure {
  if (k == 0) { 9007199254740991 } else { big(k = k - 1) + 1 }
}

agent neg(a: integer) -> integer with pure { -a }

agent diff(a: integer, b: integer) -> integer with pure { a - b }

agent modulo(a: integer, b: integer) -> integer with pure { a % b }

agent is_even(n: integer) -> integer with pure {
  if (n == 0) { 1 } else { is_odd(n = n - 1) }
}

agent is_odd(n: integer) -> integer with pure {
  if (n == 0) { 0 } else { is_even(n = n - 1) }
}

agent steps(n: integer, acc: integer ?= 0) -> integer with pure {
  let parity = n % 2
  let nxt = if (parity == 0) { half(n = n) } else { 3 * n + 1 }
  if (n == 1) { acc } else { steps(n = nxt, acc = acc + 1) }
}

agent collatz(n: integer, acc: integer ?= 0) -> integer with pure {
  let odd = n % 2
  if (n == 1) { acc } else { if (odd == 0) { collatz(n = half(n = n), acc = acc + 1) } else { collatz(n = 3 * n + 1, acc = acc + 1) } }
}

agent half(n: integer) -> integer with pure {
  if (n < 2) { 0 } else { 1 + half(n = n - 2) }
}

agent both(a: integer, b: integer) -> integer with pure {
  if (a > 0 && modulo(a = a, b = b) == 0) { 1 } else { 0 }
}

agent choose(a: integer) -> integer with pure {
  if (!(a < 0) || a == -5) { a } else { -a }
}

agent deep(n: integer) -> integer with pure {
  if (n == 0) { 0 } else { 1 + deep(n = n - 1) }
}

agent main() -> unknown {
  use handler { request panic(msg: string) { break msg } }
  let a = pow2(k = 10)
  let b = big(k = 3)
  let c = neg(a = 0)
  let d = diff(a = 0, b = 0)
  let e = modulo(a = -7, b = 3)
  let f = modulo(a = 7, b = -3)
  let g = is_even(n = 1001)
  let h = collatz(n = 27) * 1000 + steps(n = 97)
  let i = choose(a = -5) + choose(a = -6) + choose(a = 4)
  let j = both(a = 0, b = 5) + both(a = 10, b = 5)
  let k = pow2(k = 1100)
  [a, b, c, d, e, f, g, h, i, j, deep(n = 5000), k > 0, mod_zero(), too_deep()]
}

agent mod_zero() -> unknown {
  use handler { request panic(msg: string) { break msg } }
  both(a = 0, b = 0)
}

agent too_deep() -> unknown {
  use handler { request panic(msg: string) { break msg } }
  deep(n = 100000)
}
