// The root primitives behind the operators (prelude.md §2–3, language.md §8.2–8.3, §11.2):
// result kinds, floor modulo, zero divisors, code-point string order, NaN, kind-exact equality.

agent show(label: string, value: unknown) -> null {
  console.print(text = f"${label}: ${kind(value = value)}")
}

// The value with its runtime kind, so integer and number results can be told apart.
agent kind(value: unknown) -> string {
  match (value) {
    case integer(i) -> f"integer ${string.to_string(value = i)}"
    case number(n) -> f"number ${string.to_string(value = n)}"
    case _ -> json.to_text(value = value)
  }
}

agent failure(label: string, body: agent () -> unknown) -> null {
  let outcome = {
    use handler { request panic(msg: string) { break f"panic: ${msg}" } }
    kind(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

agent main() -> null {
  let infinity = 1e308 * 10
  let nan = infinity - infinity
  console.print(text = "-- kinds")
  show(label = "4 / 2", value = 4 / 2)
  show(label = "7 / 2", value = 7 / 2)
  show(label = "2.0 * 3.0", value = 2.0 * 3.0)
  show(label = "2 + 3", value = 2 + 3)
  show(label = "2 + 3.0", value = 2 + 3.0)
  show(label = "-(5)", value = -(5))
  show(label = "-(5.0)", value = -(5.0))
  show(label = "-(0)", value = -(0))
  show(label = "1e308 * 10", value = infinity)
  show(label = "integer overflow", value = 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991)
  show(label = "Infinity - Infinity", value = nan)
  console.print(text = "-- floor modulo")
  show(label = "-7 % 3", value = -7 % 3)
  show(label = "7 % -3", value = 7 % -3)
  show(label = "7.5 % 2", value = 7.5 % 2)
  show(label = "-7.5 % 2", value = -7.5 % 2)
  show(label = "-7 % 7", value = -7 % 7)
  show(label = "0.1 % 0.01", value = 0.1 % 0.01)
  show(label = "5 % Infinity", value = 5 % infinity)
  show(label = "Infinity % 2", value = infinity % 2)
  console.print(text = "-- zero divisors")
  failure(label = "1 / 0", body = agent () -> unknown { 1 / 0 })
  failure(label = "1.0 / -0.0", body = agent () -> unknown { 1.0 / -0.0 })
  failure(label = "1 % 0", body = agent () -> unknown { 1 % 0 })
  failure(label = "1.5 % 0.0", body = agent () -> unknown { 1.5 % 0.0 })
  console.print(text = "-- comparisons")
  show(label = "1 < 1.5", value = 1 < 1.5)
  show(label = "2 >= 2.0", value = 2 >= 2.0)
  show(label = "\"ab\" < \"abc\"", value = "ab" < "abc")
  show(label = "\"Z\" < \"a\"", value = "Z" < "a")
  show(label = "\"é\" > \"z\"", value = "é" > "z")
  show(label = "\"😀\" > \"ｚ\" (astral after BMP)", value = "😀" > "ｚ")
  show(label = "NaN < 1", value = nan < 1)
  show(label = "NaN >= 1", value = nan >= 1)
  let text: number | string = "1"
  let one: number | string = 1
  failure(label = "\"1\" < 1", body = agent () -> unknown { text < one })
  console.print(text = "-- equality")
  show(label = "1 == 1.0", value = 1 == 1.0)
  show(label = "4 / 2 == 2", value = 4 / 2 == 2)
  show(label = "-0 == 0", value = -0 == 0)
  show(label = "NaN == NaN", value = nan == nan)
  show(label = "NaN != NaN", value = nan != nan)
  show(label = "[1, [2.0]] == [1, [2]]", value = [1, [2.0]] == [1, [2]])
  show(label = "{a = 1, b = 2} == {b = 2, a = 1}", value = { a = 1, b = 2 } == { b = 2, a = 1 })
  show(label = "{a = null} == {b = null}", value = { a = null } == { b = null })
  let f = agent (x: integer) -> integer { x }
  let g = agent (x: integer) -> integer { x }
  show(label = "same closure", value = f == f)
  show(label = "equal-looking closures", value = f == g)
  show(label = "same primitive", value = string.length == string.length)
  console.print(text = "-- logic and text")
  show(label = "true && false", value = true && false)
  show(label = "false || true", value = false || true)
  show(label = "!true", value = !true)
  show(label = "\"a\" ++ \"é\"", value = "a" ++ "é")
  console.print(text = "-- number text")
  show(label = "0.1 + 0.2", value = 0.1 + 0.2)
  show(label = "1 / 3", value = 1 / 3)
  show(label = "100", value = 100.0)
  show(label = "123456789012345680000", value = 123456789012345680000.0)
  show(label = "1e21", value = 1e21)
  show(label = "0.000001", value = 0.000001)
  show(label = "0.0000001", value = 0.0000001)
  show(label = "-0.0000012", value = -0.0000012)
  show(label = "1.5e300", value = 1.5e300)
  show(label = "5e-324", value = 5e-324)
  show(label = "max binary64", value = 1.7976931348623157e308)
  show(label = "-Infinity", value = -infinity)
}
