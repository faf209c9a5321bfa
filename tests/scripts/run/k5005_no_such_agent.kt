agent main() -> string { "hello" }

agent helper(n: integer) -> integer { n + 1 }
