import util.text
import util.text as t
import { shout, type tagged } from util.text

agent main() -> string {
  let c: tagged = text.tagged(label = shout(value = "ok"))
  f"${text.shout(value = "hi")} ${t.shout(value = "yo")} ${c.label} ${json.to_text(value = c)}"
}
