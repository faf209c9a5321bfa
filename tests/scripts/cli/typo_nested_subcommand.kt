// `mcp lgin`: a nested subcommand is suggested from its own parent's list.
agent main() -> string { "unused" }
