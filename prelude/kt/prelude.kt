// The prelude root module (`prelude.md` §2–3): the primitives behind the operators, the typed
// error channel `throw`, and `catch`. Every operator desugars to a call of one of these.

@"Adds `right` to `left` (the `+` operator); integer plus integer is an integer."
primitive agent add[T extends number](left: T, right: T) -> T

@"Subtracts `right` from `left` (the `-` operator)."
primitive agent subtract[T extends number](left: T, right: T) -> T

@"Multiplies `left` by `right` (the `*` operator)."
primitive agent multiply[T extends number](left: T, right: T) -> T

@"The floor modulo of `left` by `right` (the `%` operator): the result has the sign of the divisor. A zero divisor panics with `modulo by zero`."
primitive agent modulo[T extends number](left: T, right: T) -> T

@"Divides `left` by `right` (the `/` operator); the result is always typed `number`. A zero divisor panics with `division by zero`."
primitive agent divide(left: number, right: number) -> number

@"Negates `value` (the unary `-` operator), keeping its kind."
primitive agent negate[T extends number](value: T) -> T

@"Structural, kind-exact equality (the `==` operator): `1 == 1.0` is false."
primitive agent equal[T](left: T, right: T) -> boolean

@"Structural, kind-exact inequality (the `!=` operator)."
primitive agent not_equal[T](left: T, right: T) -> boolean

@"Whether `left` is smaller than `right` (the `<` operator): numbers compare numerically, strings by code point."
primitive agent less_than[T extends number | string](left: T, right: T) -> boolean

@"Whether `left` is smaller than or equal to `right` (the `<=` operator)."
primitive agent less_or_equal[T extends number | string](left: T, right: T) -> boolean

@"Whether `left` is larger than `right` (the `>` operator)."
primitive agent greater_than[T extends number | string](left: T, right: T) -> boolean

@"Whether `left` is larger than or equal to `right` (the `>=` operator)."
primitive agent greater_or_equal[T extends number | string](left: T, right: T) -> boolean

@"Logical and (the `&&` operator); both operands are always evaluated."
primitive agent and(left: boolean, right: boolean) -> boolean

@"Logical or (the `||` operator); both operands are always evaluated."
primitive agent or(left: boolean, right: boolean) -> boolean

@"Logical negation (the `!` operator)."
primitive agent not(value: boolean) -> boolean

@"Concatenates two strings (the `++` operator and templates)."
primitive agent concat(left: string, right: string) -> string

@"The typed error channel: raises `error`. A handler clause for `prelude.throw` catches payloads of its type; unhandled, the run fails with the payload."
request throw[T](@"The error payload, usually a data value with a `message` field." error: T) -> never

@"Runs `body` and returns its value or, when it throws, the thrown payload, as a union to `match` on."
agent catch[T, Err, effect E](body: agent () -> T with E | prelude.throw[Err]) -> T | Err with E {
  use handler {
    request prelude.throw(error: Err) -> never { break error }
  }
  body()
}
