// `--colr` before the subcommand: the nearest global flag is named.
agent main() -> string { "unused" }
