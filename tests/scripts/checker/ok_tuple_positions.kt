// `language.md` §9.12: positions within a tuple have their element types, positions an array
// (or a tuple's further positions) may fill have the element type, and a position beyond a
// tuple's length reads `null`.
agent third(pair: [integer, string]) -> integer | null {
  match (pair) {
    case [n, s, extra] -> extra
    case [n, s] -> n
  }
}

agent last_of_three(xs: array[integer]) -> integer {
  match (xs) {
    case [a, b, c] -> c
    case _ -> 0
  }
}

agent main() -> [integer | null, integer, integer] {
  [third(pair = [1, "a"]), last_of_three(xs = [1, 2, 3]), last_of_three(xs = [1])]
}
