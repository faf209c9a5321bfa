agent main() -> integer {
  let x: integer = 1.5
  x
}
