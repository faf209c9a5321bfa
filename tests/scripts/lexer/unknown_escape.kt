agent main() -> string {
  "tab\q here"
}
