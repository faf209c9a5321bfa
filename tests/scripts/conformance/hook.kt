// C32 of language.md §13.
@"Doubles the delivered value."
agent double(value: integer) -> integer { value * 2 }

agent poke(url: string) -> string {
  let ok = http.fetch(url = url, method = "POST", headers = record.empty(), body = "{\"value\": 21}")
  let bad = http.fetch(url = url, method = "POST", headers = record.empty(), body = "{\"value\": \"x\"}")
  f"${string.to_string(value = ok.status)} ${ok.body} ${string.to_string(value = bad.status)}"
}

agent main() -> string {
  webhook.inbound(callback = double, subscriber = poke)
}
