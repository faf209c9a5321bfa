agent main(p: {name: string} | null) -> string {
  p.name
}
