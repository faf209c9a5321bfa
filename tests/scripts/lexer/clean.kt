agent main() -> string {
  "hello, katari"
}
