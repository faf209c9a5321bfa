agent main(xs: array[integer, string]) -> integer { 1 }
