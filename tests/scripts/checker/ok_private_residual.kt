// `language.md` §7.7, §9.11: an arm's residual keeps the private attribute it carries; written
// `of private` (or in a private agent) it may be annotated, and a pure call lifts it.
data circle(radius: number)
data square(side: number)

agent residual(token: (string | null) of private) -> integer of private {
  match (token) {
    case null -> 0
    case t: string of private -> string.length(value = t)
  }
}

agent member(shape: circle of private | square) -> number of private {
  match (shape) {
    case circle(radius) -> {
      let r: number of private = radius
      r * 2
    }
    case square(side) -> side
  }
}

private agent inside(token: (string | null) of private) -> integer {
  match (token) {
    case null -> 0
    case t: string -> string.length(value = t)
  }
}

agent main() -> integer of private {
  let a = residual(token = null)
  let b = member(shape = square(side = 2))
  inside(token = "abc") + a
}
