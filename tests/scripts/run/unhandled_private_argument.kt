@"Checks a token."
request check(user: string, token: string of private) -> boolean

agent main(token: string of private) -> boolean with check {
  check(user = "ada", token = token)
}
