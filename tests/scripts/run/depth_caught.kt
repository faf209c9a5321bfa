agent down(n: integer) -> integer with pure {
  if (n == 0) { 0 } else { 1 + down(n = n - 1) }
}

agent main() -> string {
  use handler {
    request panic(msg: string) { break f"caught: ${msg}" }
  }
  string.to_string(value = down(n = 100000))
}
