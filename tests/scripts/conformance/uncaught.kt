data oops(message: string)

agent main() -> integer {
  prelude.throw(error = oops(message = "no luck"))
}
