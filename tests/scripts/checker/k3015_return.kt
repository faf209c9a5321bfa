agent main() -> unknown {
  return json.to_text
}
