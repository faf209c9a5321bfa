// `language.md` §7.7, §9.11: an arm's residual keeps the private attribute it carries, also
// through the parts a pattern reads off a private member of a union that is not private as a
// whole; annotating them as public is K3001.
data circle(radius: number)
data square(side: number)

agent residual(token: (string | null) of private) -> integer of private {
  match (token) {
    case null -> 0
    case t: string -> string.length(value = t)
  }
}

agent member(shape: circle of private | square) -> number of private {
  match (shape) {
    case circle(radius) -> {
      let r: number = radius
      r
    }
    case square(side) -> side
  }
}

agent narrowed(n: number of private | string) -> integer of private {
  match (n) {
    case integer(i) -> {
      let whole: integer = i
      whole
    }
    case _ -> 0
  }
}

agent main() -> null { null }
