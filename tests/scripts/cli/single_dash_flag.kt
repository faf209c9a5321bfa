// `-json` is one edit from `--json`, though clap reports only its first letter.
agent main() -> string { "unused" }
