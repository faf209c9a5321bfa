agent greet(name: string, times: integer ?= "twice") -> string { name }

agent main() -> string { greet(name = "ada") }
