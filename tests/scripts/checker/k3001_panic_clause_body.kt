agent main() -> string {
  use handler {
    request panic(msg: string) { msg }
  }
  "ok"
}
