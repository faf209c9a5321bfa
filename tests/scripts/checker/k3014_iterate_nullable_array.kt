agent main(xs: array[integer] | null) -> array[integer] {
  for (let x in xs) { next x }
}
