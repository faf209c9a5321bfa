request ask() -> string

agent main() -> string {
  let answering = handler[string] { request ask() { next "yes" } }
  "done"
}
