// Argument-driven inference (§7.4): `never` is a lower bound, numeric joins, explicit application.
agent takes_never(xs: array[never]) -> null { null }
agent takes_integer(n: integer) -> null { null }
agent takes_number(n: number) -> null { null }

agent main() -> array[null] {
  let reversed = array.reverse(target = [])
  let emptied = array.reverse(target = array.empty())
  let sum = 1 + 2
  let mixed = 1 + 2.5
  let picked = array.get[integer](target = [1, 2], index = 0)
  let same = prelude.equal(left = 1, right = "a")
  [
    takes_never(xs = reversed),
    takes_never(xs = emptied),
    takes_integer(n = sum),
    takes_number(n = mixed),
    takes_integer(n = -sum),
  ]
}
