// `language.md` §6.8: a generic parameter's bound cannot refer to that parameter, directly or
// through the bounds of the others (every reference on such a cycle is undefined there).
agent nested[T extends array[T]](x: T) -> T { x }

data cell[A extends B, B extends [A]](first: A, second: B)

agent main() -> integer { 1 }
