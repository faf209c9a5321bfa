// A generic request performed inside a generic agent is answered against the agent's
// instantiation: `get[integer]` asks `ask[T]` with `T = integer`, so a string answer does not
// conform (before, it was accepted and `+ 1` failed inside the interpreter).
request ask[T]() -> T

agent get[T]() -> T with ask[T] { ask[T]() }

agent main() -> integer with ask[integer] { get[integer]() + 1 }
