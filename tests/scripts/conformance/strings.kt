// C05 of language.md §13.
agent main() -> string {
  let name = "Kat"
  let price = 5
  let plain = "cost: $5, not ${price}"
  f"${name} said \"hi\" for $${string.to_string(value = price)} (not \${price}) in C:\\tmp | ${plain}"
}
