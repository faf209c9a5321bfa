@"Picks one of the options by index."
request pick(options: array[string]) -> integer

agent main() -> integer with pick { pick(options = ["a", "b"]) + 1 }
