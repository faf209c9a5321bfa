@"Asks for a password."
request password(user: string) -> string of private

agent main() -> { password: string of private, length: integer of private, user: string } with password {
  let secret = password(user = "ada")
  { password = secret, length = string.length(value = secret), user = "ada" }
}
