// A handler applied explicitly is an ordinary agent value taking the continuation.
request ask() -> string

agent main() -> string {
  let answering = handler[string, pure] { request ask() { next "yes" } }
  let result = answering(continuation = agent (value: null) -> string with ask { ask() })
  use answering
  f"${result} ${ask()}"
}
