// `next … with` in tail position of a loop body or a clause (taken without unwinding by the
// evaluator): every update sees the state the iteration started with, branches of `if` and
// statement-position `next` count as tail, a loop nested in a body keeps its own `next`s, and
// arithmetic on integers keeps its kinds and panics.
request step(by: integer) -> integer

agent fibs(n: integer) -> array[integer] {
  for (let i in array.range(start = 0, end = n), var a: integer = 0, var b: integer = 1) {
    next a with { a = b, b = a + b }
  }
}

agent parity(n: integer) -> string {
  for (let i in array.range(start = 0, end = n), var evens: integer = 0, var odds: integer = 0) {
    if (i % 2 == 0) { next "e" with { evens = evens + 1 } } else { next "o" with { odds = odds + 1 } }
  } then (marks) {
    f"${string.join(parts = marks, separator = "")} evens=${string.to_string(value = evens)} odds=${string.to_string(value = odds)}"
  }
}

agent nested() -> array[integer] {
  for (let i in array.range(start = 0, end = 3), var seen: integer = 0) {
    let inner = for (let j in array.range(start = 0, end = 3), var sum: integer = 0) {
      if (j == 1) { next i with { sum = sum + i } } else { next j with { sum = sum + j } }
    } then (_) { sum }
    next i * 100 + inner * 10 + seen with { seen = seen + 1 }
  }
}

agent stepping() -> string {
  use handler (var total = 0, var calls = 0) {
    request step(by: integer) {
      if (by < 0) { next total with { calls = calls + 1 } }
      next total + by with { total = total + by, calls = calls + 1 }
    }
  } then (r) { f"${r} total=${string.to_string(value = total)} calls=${string.to_string(value = calls)}" }
  let a = step(by = 5)
  let b = step(by = -1)
  let c = step(by = 2)
  f"${string.to_string(value = a)},${string.to_string(value = b)},${string.to_string(value = c)}"
}

agent arithmetic() -> string {
  let big = math.pow(base = 10, exponent = 200)
  let seeds = for (let j in array.range(start = 0, end = 5), var acc: integer = 7) {
    next acc with { acc = (acc * 31 + j) % 1000003 }
  } then (xs) { json.to_text(value = [xs, acc]) }
  let huge = (big * big) * big
  use handler { request panic(msg: string) { break f"${seeds} ${string.to_string(value = huge)} panic: ${msg}" } }
  let zero = 0
  string.to_string(value = (seeds == "" ) == false && (big + 1) % zero == 1)
}

agent main() -> string {
  let lines = [
    json.to_text(value = fibs(n = 10)),
    parity(n = 5),
    json.to_text(value = nested()),
    stepping(),
    arithmetic(),
  ]
  string.join(parts = lines, separator = "\n")
}
