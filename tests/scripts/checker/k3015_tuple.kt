agent main() -> integer {
  let tools = [json.to_text, 1]
  1
}
