agent main(b: string, a: string, c: string ?= "c") -> string { b ++ a ++ c }
