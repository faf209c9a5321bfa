// C37 of language.md §13.
data circle(radius: number)
data rect(width: number, height: number)

agent area(s: circle | rect) -> number {
  match (s) {
    case circle(radius => r) -> r * r
  }
}

agent main() -> number { area(s = rect(width = 1, height = 2)) }
