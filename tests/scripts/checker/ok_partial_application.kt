// A partial application is a residual agent of the holed parameters, with the callee's effect.
request tick() -> integer

agent scale(factor: number, value: number) -> number with tick { factor * value + tick() }
agent greet(name: string, punct: string ?= "!") -> string { f"hi ${name}${punct}" }

agent apply_scale(f: agent (value: number) -> number with tick) -> number with tick { f(value = 2) }
agent apply_greet(f: agent (name: string, punct?: string) -> string) -> string { f(name = "ada") }

agent main() -> string {
  use handler { request tick() { next 0 } }
  let triple = scale(factor = 3, value = _)
  let hi = greet(name = _, punct = _)
  let get_first = array.get[string](target = _, index = 0)
  let n = apply_scale(f = triple)
  f"${apply_greet(f = hi)} ${string.to_string(value = n)}"
}
