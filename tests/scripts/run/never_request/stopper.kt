@"Stops everything."
request stop(reason: string) -> never

agent main() -> integer with io | stop {
  console.print(text = "about to stop")
  stop(reason = "enough")
}
