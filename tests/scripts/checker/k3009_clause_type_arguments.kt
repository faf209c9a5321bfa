data oops(message: string)

agent main() -> string {
  use handler {
    request prelude.throw[oops, oops](error) -> never { break error.message }
  }
  "fine"
}
