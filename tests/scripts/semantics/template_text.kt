// Templates and `++` with `string.to_string` parts (`language.md` §9.9, `prelude.md` §3): the
// text of a number written in place must be exactly the native's text, for every kind of number
// and for values that are not numbers; constant and local parts are read in place and stay
// usable afterwards (template_private.kt: a private number makes the text private).
agent main() -> string {
  let big = 1e308 * 10
  let numbers = [0, -0.0, 7, -42, 0.1 + 0.2, 1e21, 1.5e-7, 9007199254740991.0 * 4, -9007199254740991 * 3, 123456789012, big, -big, big - big]
  let inline = for (let n in numbers) { next f"<${string.to_string(value = n)}>" }
  let appended = for (let n in numbers) { next "<" ++ string.to_string(value = n) ++ ">" }
  // The native's own text: a `let` calls it; only template and `++` parts are written in place.
  let through = for (let n in numbers) {
    let text = string.to_string(value = n)
    next "<" ++ text ++ ">"
  }
  let label = "item-"
  let mixed = f"${label}${string.to_string(value = 3)}:${string.to_string(value = "text")}:${string.to_string(value = true)}:${string.to_string(value = null)}:${label}"
  let joined = label ++ string.to_string(value = 12) ++ label
  console.print(text = "public " ++ string.to_string(value = 6))
  let open = f"${string.to_string(value = 5)}"
  f"${string.join(parts = inline, separator = " ")}\n${json.to_text(value = inline == through)} ${json.to_text(value = appended == through)}\n${mixed}\n${joined}\n${open}"
}
