agent main() -> { name: string, n: number, none: null } {
  { name = "ada", n = 2.0 * 3.0, none = null }
}
