// Data values and `match`: builds shapes with data constructors, turns each into a record via
// `match` on the constructor, then sums the records' fields.
data circle(radius: integer)
data rect(width: integer, height: integer)
data square(side: integer)
type shape = circle | rect | square

agent make(i: integer) -> shape {
  match (i % 3) {
    case 0 -> circle(radius = i % 10)
    case 1 -> rect(width = i % 7, height = i % 5)
    case _ -> square(side = i % 9)
  }
}

agent area(s: shape) -> integer {
  match (s) {
    case circle(radius => r) -> 3 * r * r
    case rect(width, height) -> width * height
    case square(side) -> side * side
  }
}

agent main(n: integer ?= 100000) -> { count: integer, total: integer, corners: integer } {
  let shapes = for (let i in array.range(start = 0, end = n)) { next make(i = i) }
  let summaries = for (let s in shapes) {
    let corners = match (s) {
      case circle(radius => _) -> 0
      case _ -> 4
    }
    next { area = area(s = s), corners = corners }
  }
  for (let r in summaries, var total: integer = 0, var corners: integer = 0) {
    next null with { total = total + r.area, corners = corners + r.corners }
  } then (_) {
    { count = array.length(target = summaries), total = total, corners = corners }
  }
}
