agent greet(name: string) -> string {
  f"hello, ${nmae}"
}
