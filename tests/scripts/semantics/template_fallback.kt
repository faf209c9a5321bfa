// A template whose parts start in place (constants, locals, numbers) and then meet a part that
// needs evaluating starts over the ordinary way: the panic of `n % zero` inside a
// `string.to_string` part is the run's failure, after the parts before it were written in place.
agent main(zero: integer ?= 0) -> string {
  let n = 7
  let label = "n="
  let first = f"${label}${string.to_string(value = n % 4)}"
  console.print(text = first)
  f"${label}${string.to_string(value = n)}:${string.to_string(value = n % zero)}"
}
