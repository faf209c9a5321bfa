// `language.md` §6.8: bounds of every kind, checked where generics are inferred (calls, request
// clauses) and usable inside their declarations; a bound may name the other parameters.
request tick() -> integer
request pick[T extends number](options: array[T]) -> T

data box[T extends number](value: T)

agent sum[T extends number](a: T, b: T) -> T { a + b }

agent count[T, U extends array[T]](first: T, rest: U) -> integer { 1 + array.length(target = rest) }

// `E` is used at its bound: the body performs `E`, which the declared `with tick` allows.
agent twice[effect E extends tick](f: agent () -> integer with E) -> integer with tick { f() + f() }

agent main() -> unknown {
  use handler (var n = 0) {
    request tick() { next n with { n = n + 1 } }
    request pick(options: array[integer]) {
      match (array.get(target = options, index = 1)) {
        case null -> { next 0 }
        case o -> { next o }
      }
    }
  }
  let u: unknown = box(value = 2.5)
  // On `unknown` the field of a `box` is read at its bound, `number`.
  let doubled = match (u) {
    case box(value) -> value * 2
    case _ -> 0
  }
  [sum(a = 1, b = 2), count(first = 1, rest = [2, 3]), twice(f = agent () -> integer { tick() }), pick(options = [7, 8]), doubled]
}
