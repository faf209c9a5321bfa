agent main() -> array[integer] {
  for (let x in { a = 1 }) { next x }
}
