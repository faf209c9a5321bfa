agent main() -> string {
  "say \"hi\"\n\tand go"
}
