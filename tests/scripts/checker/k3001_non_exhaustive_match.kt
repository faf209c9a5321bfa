agent describe(v: integer | string | null) -> string {
  match (v) {
    case null -> "nothing"
    case string(s) -> s
  }
}

agent main() -> string { describe(v = 1) }
