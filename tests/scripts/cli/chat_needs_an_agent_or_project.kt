// `katari chat` with neither an agent, --project nor --thread is a usage error (host.md §7.1.1).
agent main() -> string { "unused" }
