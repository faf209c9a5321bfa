// `--ags` is one edit from `--arg`; clap alone suggests nothing (host.md §2.1.2).
agent main() -> string { "unused" }
