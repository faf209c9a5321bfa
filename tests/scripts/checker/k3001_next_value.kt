request tick() -> integer

agent main() -> integer {
  use handler {
    request tick() { next "one" }
  }
  tick()
}
