agent main(name: string, times: integer ?= 2, tags: array[string] | null ?= null) -> string { name }
