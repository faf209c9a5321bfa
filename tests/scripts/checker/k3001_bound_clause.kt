// `language.md` §6.8, §9.19: the instantiation a clause handles is inferred from its
// annotations, and it must satisfy the request's bounds like one inferred at a call.
request pick[T extends number](options: array[T]) -> T

agent main() -> string {
  use handler {
    request pick(options: array[string]) { next "first" }
  }
  "done"
}
