// A run parses only the prelude modules its program can name (docs/decisions.md). Each module
// below is named in a way the scan must not miss: in an imported user module only, imported by
// its full name under another qualifier, and with a comment between the qualifier and its dot.
import util.numbers
import prelude.array as items

agent main() -> string {
  let n = string/* the text module */.length(value = "abc")
  let k = items.length(target = [1, 2])
  f"${string.to_string(value = n)} ${string.to_string(value = k)} ${string.to_string(value = numbers.biggest())}"
}
