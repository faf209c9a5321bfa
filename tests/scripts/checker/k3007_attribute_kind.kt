agent main(s: string of integer) -> string { s }
