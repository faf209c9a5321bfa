request tick() -> integer

agent stamped(words: array[string]) -> array[string] with pure {
  array.map(target = words, apply = agent (value: string) -> string { f"${string.to_string(value = tick())} ${value}" })
}

agent main() -> array[string] { [] }
