import util

agent main() -> string {
  util.greet(name = "ada")
}
