// C39 of language.md §13.
agent main() -> unknown {
  json.decode(value = json.json_null())
}
