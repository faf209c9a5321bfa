agent main() -> integer {
  let get = array.get(target = _, index = 0)
  1
}
