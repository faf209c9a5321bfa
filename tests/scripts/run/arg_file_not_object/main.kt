agent main(name: string, times: integer) -> string {
  string.repeat(value = name, count = times)
}
