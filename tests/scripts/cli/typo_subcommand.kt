// `rnu` is two edits from `run`: the usage error names it (host.md §2.1.2).
agent main() -> string { "unused" }
