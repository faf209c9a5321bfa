// `prelude.time` (prelude.md §16): `now` is whole epoch milliseconds delivered integer-kind,
// `sleep` waits at least its argument and returns at once for zero or less. `prelude.file`
// (§12): a `$ref` object decodes to a handle without checking the blob, handles with the same
// id are equal, and using a missing blob panics with the exact message.

agent attempt(label: string, body: agent () -> unknown with io) -> null with io {
  let outcome = {
    use handler { request panic(msg: string) { break f"panic: ${msg}" } }
    json.to_text(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

agent main() -> null {
  let before = time.now()
  attempt(label = "now is integer-kind, after 2020", body = agent () -> unknown with io {
    match (before) {
      case integer(ms) -> ms > 1577836800000
      case _ -> "not an integer"
    }
  })
  attempt(label = "sleep 0 and -5", body = agent () -> unknown with io { [time.sleep(milliseconds = 0), time.sleep(milliseconds = -5)] })
  attempt(label = "sleep 30 waits at least 30 ms", body = agent () -> unknown with io {
    let slept = time.sleep(milliseconds = 30)
    time.now() - before >= 30
  })
  let missing = "sha256-0000000000000000000000000000000000000000000000000000000000000000"
  let handle = {
    use handler { request prelude.throw(error: json.parse_error | json.decode_error) -> never { break null } }
    json.parse_as[file](text = f"{\"$ref\":\"${missing}\"}")
  }
  match (handle) {
    case null -> console.print(text = "the handle did not decode")
    case f -> {
      attempt(label = "handle on the wire", body = agent () -> unknown with io { f })
      attempt(label = "same id, same file", body = agent () -> unknown with io {
        let again = {
          use handler { request prelude.throw(error: json.parse_error | json.decode_error) -> never { break null } }
          json.parse_as[file](text = f"{\"$ref\":\"${missing}\",\"semanticKind\":\"anything\"}")
        }
        f == again
      })
      attempt(label = "size", body = agent () -> unknown with io { file.size(value = f) })
      attempt(label = "read_base64", body = agent () -> unknown with io { file.read_base64(value = f) })
      attempt(label = "content_type", body = agent () -> unknown with io { file.content_type(value = f) })
      attempt(label = "path", body = agent () -> unknown with io { file.path(value = f) })
    }
  }
}
