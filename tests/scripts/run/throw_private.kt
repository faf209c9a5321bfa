agent main(token: string of private) -> string {
  prelude.throw(error = { token = token, user = "ada" })
}
