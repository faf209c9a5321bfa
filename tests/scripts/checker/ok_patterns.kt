// Patterns narrow the residual; `true`/`false` together cover `boolean`; constructor arguments
// are inferred from the subject.
data box[T](value: T)

agent main(v: integer | string | boolean | null, b: box[integer] | null) -> string {
  let first = match (v) {
    case null -> "null"
    case true -> "yes"
    case false -> "no"
    case integer(n) -> string.to_string(value = n + 1)
    case s -> s
  }
  let second = match (b) {
    case box(value) -> string.to_string(value = value + 1)
    case null -> "none"
  }
  f"${first}${second}"
}
