agent main(token: string of private) -> string of private {
  token
}
