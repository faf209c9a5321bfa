// A result or annotation declared `of private` as a whole does not cover a part written public
// inside it: the help names the type to declare instead of repeating `of private`.
agent record_result(secret: string of private) -> { msg: string } of private {
  { msg = secret }
}

agent annotated(secret: string of private) -> integer {
  let parts: array[string] of private = [secret]
  1
}
