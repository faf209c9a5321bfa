agent main() -> string {
  let n = 3
  if (n) { "yes" } else { "no" }
}
