agent main(v: integer | string) -> string {
  match (v) {
    case n: integer -> "integer"
  }
}
