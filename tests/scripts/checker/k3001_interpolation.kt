agent main() -> string {
  let n = 3
  f"n=${n}"
}
