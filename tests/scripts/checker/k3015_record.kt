agent main() -> integer {
  let tools = { get = array.get }
  1
}
