agent main() -> integer {
  for (let x in [1, 2], var total = 0) {
    next x with { total = "many" }
  } then (_) { total }
}
