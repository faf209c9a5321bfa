request measure(value: number) -> number

agent main() -> number {
  use handler {
    request measure(value: integer) { next 1.0 }
  }
  measure(value = 2.5)
}
