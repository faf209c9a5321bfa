// `prelude.math` (prelude.md §6): kinds of abs/min/max, equal operands, NaN and infinities, the
// three number-to-integer conversions (ties away from zero), pow and sqrt kinds and panics.

// The value with its runtime kind, so integer and number results can be told apart.
agent kind(value: unknown) -> string {
  match (value) {
    case integer(i) -> f"integer ${string.to_string(value = i)}"
    case number(n) -> f"number ${string.to_string(value = n)}"
    case _ -> json.to_text(value = value)
  }
}

agent show(label: string, values: array[unknown]) -> null {
  let texts = array.map(target = values, apply = agent (value: unknown) -> string { kind(value = value) })
  console.print(text = f"${label}: ${string.join(parts = texts, separator = ", ")}")
}

agent attempt(label: string, body: agent () -> unknown) -> null {
  let outcome = {
    use handler { request panic(msg: string) { break f"panic: ${msg}" } }
    kind(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

agent main() -> null {
  let infinity = 1e308 * 10
  let nan = infinity - infinity
  show(label = "abs -3, -3.0, -0.0, -Infinity", values = [math.abs(value = -3), math.abs(value = -3.0), math.abs(value = -0.0), math.abs(value = -infinity)])
  show(label = "max 3 2.0, max 3 2, min 3 2.0, min 2.5 3", values = [math.max(left = 3, right = 2.0), math.max(left = 3, right = 2), math.min(left = 3, right = 2.0), math.min(left = 2.5, right = 3)])
  show(label = "equal operands: min 1 1.0, max 1.0 1", values = [math.min(left = 1, right = 1.0), math.max(left = 1.0, right = 1)])
  show(label = "NaN and infinities", values = [math.min(left = nan, right = 1), math.max(left = 1, right = nan), math.max(left = infinity, right = 1), math.min(left = -infinity, right = 1)])
  show(label = "floor 2.7 -2.5, ceil 2.1 -0.5, floor 5", values = [math.floor(value = 2.7), math.floor(value = -2.5), math.ceil(value = 2.1), math.ceil(value = -0.5), math.floor(value = 5)])
  show(label = "round 2.5 -2.5 0.49999999999999994 -0.4 1e300", values = [math.round(value = 2.5), math.round(value = -2.5), math.round(value = 0.49999999999999994), math.round(value = -0.4), math.round(value = 1e300)])
  show(label = "ceil -0.5 == 0", values = [math.ceil(value = -0.5) == 0])
  attempt(label = "floor Infinity", body = agent () -> unknown { math.floor(value = infinity) })
  attempt(label = "ceil NaN", body = agent () -> unknown { math.ceil(value = nan) })
  attempt(label = "round -Infinity", body = agent () -> unknown { math.round(value = -infinity) })
  show(label = "pow 2^10, 2^-1, 0^0, 2.0^2, 4^0.5, -8^3", values = [math.pow(base = 2, exponent = 10), math.pow(base = 2, exponent = -1), math.pow(base = 0, exponent = 0), math.pow(base = 2.0, exponent = 2), math.pow(base = 4, exponent = 0.5), math.pow(base = -8, exponent = 3)])
  attempt(label = "pow 0^-1", body = agent () -> unknown { math.pow(base = 0, exponent = -1) })
  attempt(label = "pow -8^0.5", body = agent () -> unknown { math.pow(base = -8, exponent = 0.5) })
  attempt(label = "pow 10^400", body = agent () -> unknown { math.pow(base = 10, exponent = 400) })
  attempt(label = "pow NaN^2", body = agent () -> unknown { math.pow(base = nan, exponent = 2) })
  show(label = "sqrt 16, 2, 16.0, -0.0", values = [math.sqrt(value = 16), math.sqrt(value = 2), math.sqrt(value = 16.0), math.sqrt(value = -0.0)])
  attempt(label = "sqrt -1", body = agent () -> unknown { math.sqrt(value = -1) })
  attempt(label = "sqrt -Infinity", body = agent () -> unknown { math.sqrt(value = -infinity) })
  attempt(label = "sqrt NaN", body = agent () -> unknown { math.sqrt(value = nan) })
  attempt(label = "sqrt Infinity", body = agent () -> unknown { math.sqrt(value = infinity) })
}
