agent main() -> string {
  let greeting = "hello
  greeting
}
