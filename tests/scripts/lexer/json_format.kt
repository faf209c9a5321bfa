agent main() -> string {
  "two \q bad \x escapes"
}
