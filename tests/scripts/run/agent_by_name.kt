agent main() -> string { "main" }

agent other() -> string { "other" }
