// C20 of language.md §13.
data person(name: string, age: integer)

agent main() -> string {
  let people = [person(name = "Cy", age = 41), person(name = "Ada", age = 36), person(name = "Bo", age = 36)]
  let older = array.filter(target = people, keep = agent (value: person) -> boolean { value.age > 40 })
  let by_age = array.sort(target = people, by = agent (value: person) -> integer { value.age })
  let names = array.map(target = by_age, apply = agent (value: person) -> string { value.name })
  let mixed = array.sort(target = [3, "b", 1.5, "a", 2])
  f"${json.to_text(value = names)} ${string.to_string(value = array.length(target = older))} ${json.to_text(value = mixed)}"
}
