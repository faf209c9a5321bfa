// C06 of language.md §13.
agent main() -> integer {
  let a = 1 +
    2 *
    3
  let b = a; let c = b * 2
  let r = {
    x = a,
    y = c,
  }
  r.x + r.y
}
