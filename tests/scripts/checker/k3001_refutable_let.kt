agent main() -> integer {
  let pair: array[integer] = [1, 2]
  let [a, b] = pair
  a + b
}
