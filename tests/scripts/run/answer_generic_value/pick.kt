// A generic request applied as a value (`pick[integer]`) keeps its instantiation: the answer
// must be an integer, and a conforming one is used as one.
request pick[T](options: array[T]) -> T

agent main() -> [integer, integer] with pick[integer] {
  let p = pick[integer]
  let first = p(options = [1, 2]) + 1
  [first, p(options = [3])]
}
