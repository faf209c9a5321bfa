agent main() -> integer {
  let g = array.get
  1
}
