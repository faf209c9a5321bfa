// Data variance (§7.2, §7.3): covariant arguments widen, joins of covariant instantiations merge.
data box[T](value: T)
data sink[T](put: agent (value: T) -> null)

agent widen(b: box[integer]) -> box[number] { b }
agent narrow_sink(s: sink[number]) -> sink[integer] { s }
agent as_object(b: box[string]) -> {value: string} { b }

agent main(flag: boolean) -> box[number | string] {
  let joined = if (flag) { box(value = 1) } else { box(value = "one") }
  joined
}
