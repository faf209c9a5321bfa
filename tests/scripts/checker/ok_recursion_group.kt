// Mutually recursive agents written with both annotations (§6.1).
agent is_even(n: integer) -> boolean with pure {
  if (n == 0) { true } else { is_odd(n = n - 1) }
}

agent is_odd(n: integer) -> boolean with pure {
  if (n == 0) { false } else { is_even(n = n - 1) }
}

agent main() -> boolean { is_even(n = 10) }
