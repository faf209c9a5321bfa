agent main() -> integer {
  agent first[T](items: array[T], fallback: T) -> T {
    match (array.get(target = items, index = 0)) {
      case null -> fallback
      case x -> x
    }
  }
  let pick = first
  first(items = [1], fallback = 0)
}
