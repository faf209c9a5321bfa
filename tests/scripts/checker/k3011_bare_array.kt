agent main(xs: array) -> integer { 1 }
