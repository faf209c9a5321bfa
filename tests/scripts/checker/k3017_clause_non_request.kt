agent main() -> integer {
  use handler {
    request string.length(value: string) { next 1 }
  }
  1
}
