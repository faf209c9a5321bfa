// `use` continuations (`language.md` §9.20) and partial application (§9.8): providers that call
// the continuation twice or never, `return`/`next`/`break` unwinding through the provider, and
// residual agents that merge only their holed labels, keep defaults and capture arguments
// evaluated at once, in written order.
request ask(q: string, n: integer ?= 4) -> string

data pt(x: integer, y: integer ?= 9)

agent twice[R, effect E](continuation: agent (value: integer) -> R with E) -> array[R] with E {
  [continuation(value = 1), continuation(value = 2)]
}

agent never_calls[R](continuation: agent (value: null) -> R) -> string {
  "skipped"
}

agent returns_at_two() -> array[string] | string {
  let v: integer = use twice
  if (v == 2) { return "returned at 2" }
  f"v=${string.to_string(value = v)}"
}

agent greet(name: string, punct: string ?= "!", times: integer ?= 1) -> string {
  f"hi ${name}${punct}${string.to_string(value = times)}"
}

agent order(a: integer, b: integer, c: integer) -> integer { a * 100 + b * 10 + c }

agent main() -> string {
  let twice_values = {
    let v: integer = use twice
    v * 10
  }
  let skipped = {
    use never_calls
    "ran"
  }
  // `next` from the continuation ends the iteration: the second call never happens.
  let nexted = for (let i in [10, 20]) {
    let v: integer = use twice
    if (v == 1) { next i + v }
    i * 100
  }
  let broken = for (let i in [1, 2, 3]) {
    let v: integer = use twice
    if (i == 2 && v == 2) { break "broke" }
    v
  }
  console.print(text = json.to_text(value = [twice_values, skipped, returns_at_two(), nexted, broken]))

  let shout = greet(name = _)
  let both = greet(name = _, punct = _)
  let named = both(name = "z", punct = _)
  let counted = greet(name = "w", times = _)
  console.print(text = string.join(parts = [
    shout(name = "x"),
    // An extra label that is not a hole of the residual is ignored.
    shout(name = "x", punct = "?"),
    both(name = "y"),
    both(name = "y", punct = "?"),
    named(punct = "."),
    named(),
    counted(times = 3)
  ], separator = " "))

  use handler { request ask(q: string, n: integer) { next f"${q}${string.to_string(value = n)}" } }
  let asked = ask(q = _)
  let make = pt(x = _)
  let join = string.join(parts = _, separator = "-")
  let add = prelude.add(left = 1, right = _)
  let nested = pt(x = _, y = _)(x = _, y = 5)
  console.print(text = json.to_text(value = [asked(q = "a"), make(x = 1), join(parts = ["a", "b"]), add(right = 2), nested(x = 7)]))
  // Supplied arguments are evaluated when the residual is made, in written order.
  let g = order(b = { console.print(text = "b evaluated"); 2 }, c = _, a = { console.print(text = "a evaluated"); 1 })
  console.print(text = "residual made")
  let partial_equal = [asked == asked, asked == ask(q = _)]
  f"${string.to_string(value = g(c = 3))} ${json.to_text(value = partial_equal)}"
}
