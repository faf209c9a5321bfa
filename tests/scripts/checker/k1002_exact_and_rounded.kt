// K1002 for integer literals beyond 2^53-1: 2^53 itself is exact, 2^53+1 rounds to 2^53, and a
// literal past 2^64 names its rounded value as JavaScript writes it.
agent main() -> unknown {
  [9007199254740992, 9007199254740993, 123456789012345678901234567890]
}
