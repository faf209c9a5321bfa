agent main(n: integer) -> integer { n }
