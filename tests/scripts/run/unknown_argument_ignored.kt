agent main(name: string) -> string { name }
