// `katari chat` is a command of host.md §2.1 that this version does not have yet.
agent main() -> string { "unused" }
