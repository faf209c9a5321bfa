// Run arguments, answers and `reflection.call_agent` arguments are marked private wherever
// their declared type says `of private` (language.md §8.6 rule 2), not only at the top: nested
// fields, array elements and tuple positions are redacted, their public siblings are not.
request login() -> { user: string, pass: string of private }

agent reveal(o: { tok: string of private }) -> { tok: string of private } {
  o
}

agent main(
  o: { tok: string of private, u: string },
  xs: array[string of private],
  t: [string, string of private],
  maybe: { key: string of private } | null,
) -> unknown with login | prelude.throw[reflection.call_error] {
  let r = reflection.call_agent(target = reveal, args = { o = { tok = "abc" } })
  {
    o = o,
    xs = xs,
    t = t,
    maybe = maybe,
    login = login(),
    r = r,
    public_field = o.u,
    secret_length = string.length(value = o.tok),
  }
}
