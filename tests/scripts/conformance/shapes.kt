// C07 of language.md §13.
data circle(radius: number)
data rect(width: number, height: number)
type shape = circle | rect

agent area(s: shape) -> number {
  match (s) {
    case circle(radius => r) -> 3 * r * r
    case rect(width, height) -> width * height
  }
}

agent main() -> array[number] {
  for (let s in [circle(radius = 1.0), rect(width = 2, height = 3.5)]) { next area(s = s) }
}
