agent main() -> string {
  use handler {
    request prelude.throw(error) -> never { break "failed" }
  }
  "ok"
}
