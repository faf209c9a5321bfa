// A generic local agent is instantiated at each call like a top-level one.
agent main() -> string {
  agent first[T](items: array[T], fallback: T) -> T {
    match (array.get(target = items, index = 0)) {
      case null -> fallback
      case x -> x
    }
  }
  let n = first(items = [1, 2], fallback = 0)
  let s = first(items = ["a"], fallback = "")
  f"${s}${string.to_string(value = n + 1)}"
}
