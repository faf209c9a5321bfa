// `configure` is three edits from `config`: too far to be named (host.md §2.1.2).
agent main() -> string { "unused" }
