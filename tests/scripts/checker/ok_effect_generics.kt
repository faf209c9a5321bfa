// An effectful callback's row flows through `array.map`'s effect generic into the caller.
request tick() -> integer

agent numbered(words: array[string]) -> array[string] with tick {
  array.map(target = words, apply = agent (value: string) -> string { f"${string.to_string(value = tick())} ${value}" })
}

agent pure_lengths(words: array[string]) -> array[integer] with pure {
  array.map(target = words, apply = agent (value: string) -> integer { string.length(value = value) })
}

agent main() -> array[string] {
  use handler (var n = 0) {
    request tick() { next n with { n = n + 1 } }
  }
  let lengths = pure_lengths(words = ["a", "bb"])
  numbered(words = ["x", "y"])
}
