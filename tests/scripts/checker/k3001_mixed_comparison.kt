agent main() -> boolean {
  1 < "2"
}
