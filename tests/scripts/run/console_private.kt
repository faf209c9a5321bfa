agent main() -> string {
  let token = env.get_secret(key = "KATARI_GOLDEN_TOKEN")
  let printed = reflection.call_agent(target = console.print, args = { text = token })
  let errored = reflection.call_agent(target = console.error, args = { text = f"token ${token}" })
  console.print(text = "public line")
  "done"
}
