agent main(n: integer | string) -> { n: integer | string, kind: string } {
  let kind = match (n) {
    case integer(_) -> "integer"
    case string(_) -> "string"
  }
  { n = n, kind = kind }
}
