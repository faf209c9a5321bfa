agent main(token: string of private, user: string) -> { user: string, token: string of private, both: string of private, length: integer of private } {
  { user = user, token = token, both = f"${user}:${token}", length = string.length(value = token) }
}
