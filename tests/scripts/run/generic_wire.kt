// An instantiated top-level callable keeps its instantiation on the wire (`language.md` §11.1):
// `"generics"` names each generic's argument, and decoding restores the same value.
data box[T](item: T)

agent identity[T](value: T) -> T { value }

agent main() -> string {
  let ints = identity[integer]
  let boxes = box[array[string]]
  let text = json.to_text(value = [ints, boxes, identity[string]])
  let tree = json.encode(value = ints)
  let back = json.decode[agent (value: integer) -> integer](value = tree)
  let plain = json.decode[agent (value: integer) -> integer](value = json.encode(value = identity[integer]))
  f"${text}\n${string.to_string(value = back == ints)} ${string.to_string(value = back(value = 41) + 1)} ${string.to_string(value = plain == ints)}"
}
