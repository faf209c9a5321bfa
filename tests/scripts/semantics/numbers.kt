// Number kinds and formatting (`language.md` §8.2, §11.2) beyond C03/C04: exact floor modulo,
// integer kinds of arithmetic results, overflow to non-finite numbers (text, comparisons), the
// exponent thresholds, and the same text in wire JSON.
agent main() -> string {
  let big = 1e308 * 10
  let nan = big - big
  let texts = [
    string.to_string(value = 0.1 % 0.01),
    string.to_string(value = 5 % big),
    string.to_string(value = 1e20 * 10),
    string.to_string(value = 1e-6),
    string.to_string(value = 1.5e-7),
    string.to_string(value = 5e-324),
    string.to_string(value = 1.7976931348623157e308),
    string.to_string(value = -1.5e-10),
    string.to_string(value = 100.0),
    string.to_string(value = 1e15 + 0.5),
    string.to_string(value = big),
    string.to_string(value = -big),
    string.to_string(value = nan)
  ]
  // Kinds: `4 / 2` is an integer, `5 % 3.0` a number, unary minus keeps the kind, `-0.0` is a
  // number that equals only numbers; NaN equals nothing.
  let kinds = [4 / 2 == 2, 5 % 3.0 == 2, 5 % 3.0 == 2.0, -(3) == -3, -0.0 == 0, -0.0 == 0.0, nan == nan, nan != nan, big > 1e308, nan < 1, nan >= 1]
  let wire = json.to_text(value = [0.1 + 0.2, 1e21, 1e-7, -0.0, 2.0 * 3.0, 7 / 2, 0.1 % 0.01, -7.5 % 2])
  let caught = {
    use handler { request panic(msg: string) { break msg } }
    json.to_text(value = { value = nan })
  }
  f"${string.join(parts = texts, separator = " ")}\n${json.to_text(value = kinds)}\n${wire}\n${caught}"
}
