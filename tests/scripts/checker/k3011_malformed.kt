agent main(x: integer[string]) -> integer { 1 }
