agent main() -> integer with string { 1 }
