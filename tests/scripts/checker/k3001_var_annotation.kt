agent main() -> integer {
  for (let x in [1, 2], var total: integer = 0.5) {
    next x with { total = total + x }
  } then (_) { 0 }
}
