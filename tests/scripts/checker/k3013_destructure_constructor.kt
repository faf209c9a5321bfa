data point(x: integer, y: integer)

agent norm(p => point(x, y)) -> integer { x + y }

agent main() -> integer { norm(p = point(x = 1, y = 2)) }
