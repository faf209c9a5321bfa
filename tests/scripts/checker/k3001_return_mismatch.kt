agent main() -> integer {
  let x = 2
  f"x"
}
