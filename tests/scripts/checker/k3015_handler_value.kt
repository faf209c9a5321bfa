request ask() -> string

agent main() -> string {
  let h = handler { request ask() { next "yes" } }
  "done"
}
