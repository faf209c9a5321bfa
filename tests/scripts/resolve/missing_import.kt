import nowhere.at_all

agent main() -> string { "unreachable" }
