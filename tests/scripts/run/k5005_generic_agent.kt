agent identity[T](value: T) -> T { value }

agent main() -> integer { identity(value = 1) }
