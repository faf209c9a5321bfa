agent main(name: string, times: integer ?= 2) -> array[string] {
  for (let i in array.range(start = 0, end = times)) { next f"${name}#${string.to_string(value = i)}" }
}
