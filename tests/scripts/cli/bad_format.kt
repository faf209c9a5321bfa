agent main() -> string { "fine" }
