agent add(x: integer, y: integer) -> integer { x + y }

agent main() -> integer {
  let inc = add(x = 1, z = _)
  1
}
