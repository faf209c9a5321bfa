// Run arguments may name any prelude declaration (§11.1, §2.2), also of modules the program
// does not mention: the agent is called, the data value passes through unchanged.
agent main(f: agent (value: string) -> integer, v: unknown) -> unknown {
  { length = f(value = "abcd"), v = v }
}
