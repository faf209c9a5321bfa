data oops(message: string)

agent main() -> integer | oops {
  prelude.catch[integer, oops, prelude.throw[oops]](body = agent () -> integer with prelude.throw[oops] { 1 })
}
