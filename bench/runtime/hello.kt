// Start-up cost: load, check and run the smallest program (compared with `python3 -S -c pass`).
agent main() -> string {
  "hello, katari"
}
