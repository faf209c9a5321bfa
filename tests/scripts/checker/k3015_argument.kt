agent main() -> array[string] {
  array.map(target = [1, 2], apply = json.to_text)
}
