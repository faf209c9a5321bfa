// An integer agent whose result overflows binary64: the integer tier gives up and the tree
// walker builds the number Infinity, which has no JSON form when the result is printed.
agent pow2(k: integer) -> integer with pure {
  if (k == 0) { 1 } else { 2 * pow2(k = k - 1) }
}

agent main() -> integer {
  pow2(k = 1100)
}
