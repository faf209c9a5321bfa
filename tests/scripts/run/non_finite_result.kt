agent main() -> number {
  console.print(text = "computing")
  1e308 * 10.0
}
