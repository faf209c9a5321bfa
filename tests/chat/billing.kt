@"Whether the person approves paying a refund."
request approve(amount: integer) -> boolean

@"Refunds an amount once the person approves it."
agent refund(amount: integer) -> string with approve {
  if (approve(amount = amount)) { f"refunded ${string.to_string(value = amount)}" } else { "refused" }
}

@"Looks up an account; its token stays private."
agent account(name: string, token: string of private) -> { name: string, token: string of private, length: integer of private } {
  { name = name, token = token, length = string.length(value = token) }
}

agent helper() -> string { "not offered" }
