private agent masked(secret: string of private) -> string {
  string.slice(value = secret, start = 0, end = 2)
}

agent main() -> string {
  masked(secret = "hunter2")
}
