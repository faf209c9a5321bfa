agent main() -> unknown {
  json.decode(value = json.json_null())
}
