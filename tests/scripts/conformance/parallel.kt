// C11 of language.md §13.
agent main() -> array[array[integer]] {
  let squares = parallel for (let n in array.range(start = 1, end = 5)) { next n * n }
  let pair = parallel [array.length(target = squares), 7]
  [squares, pair]
}
