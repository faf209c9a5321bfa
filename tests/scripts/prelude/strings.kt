// `prelude.string` (prelude.md §5): code points, split/join edges, clamped slices, empty searches,
// literal replacement, White_Space trimming, full case mappings, the scalar-to-text and
// text-to-number conversions, padding, repetition and the length limit.

agent show(label: string, value: unknown) -> null {
  console.print(text = f"${label}: ${json.to_text(value = value)}")
}

agent attempt(label: string, body: agent () -> unknown) -> null {
  let outcome = {
    use handler { request panic(msg: string) { break f"panic: ${msg}" } }
    json.to_text(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

agent main() -> null {
  console.print(text = "-- code points")
  show(label = "length", value = [string.length(value = "héllo"), string.length(value = "a😀b"), string.length(value = "")])
  show(label = "slice 1..3 of a😀bc", value = string.slice(value = "a😀bc", start = 1, end = 3))
  show(label = "slice -3..2, 2..1, 0..3 of \"\"", value = [string.slice(value = "abc", start = -3, end = 2), string.slice(value = "abc", start = 2, end = 1), string.slice(value = "", start = 0, end = 3)])
  show(label = "index_of after an astral character", value = string.index_of(value = "😀a😀b", search = "b"))
  console.print(text = "-- split and join")
  show(label = "a,b,,c by ,", value = string.split(value = "a,b,,c", separator = ","))
  show(label = "\"\" by ,", value = string.split(value = "", separator = ","))
  show(label = ",a, by ,", value = string.split(value = ",a,", separator = ","))
  show(label = "aaa by aa", value = string.split(value = "aaa", separator = "aa"))
  show(label = "by \"\" (code points)", value = string.split(value = "a😀é", separator = ""))
  show(label = "\"\" by \"\"", value = string.split(value = "", separator = ""))
  show(label = "join", value = [string.join(parts = ["a", "b", "c"], separator = ", "), string.join(parts = [], separator = ", "), string.join(parts = ["x"], separator = ", ")])
  console.print(text = "-- searching")
  show(label = "empty search is always found", value = [string.contains(value = "", search = ""), string.starts_with(value = "abc", search = ""), string.ends_with(value = "", search = ""), string.index_of(value = "", search = "")])
  show(label = "contains, starts_with, ends_with", value = [string.contains(value = "abc", search = "bc"), string.contains(value = "abc", search = "cb"), string.starts_with(value = "abc", search = "ab"), string.ends_with(value = "abc", search = "bc"), string.ends_with(value = "abc", search = "ab")])
  show(label = "index_of", value = [string.index_of(value = "abab", search = "ab"), string.index_of(value = "abc", search = "z")])
  show(label = "replace", value = [string.replace(value = "aaa", search = "aa", replacement = "b"), string.replace(value = "abc", search = "", replacement = "x"), string.replace(value = "a.b", search = ".", replacement = "$&"), string.replace(value = "", search = "a", replacement = "b")])
  console.print(text = "-- trimming and case")
  show(label = "trim (White_Space such as U+3000, and U+FEFF)", value = [string.trim(value = " \t\n\r x y  　﻿"), string.trim(value = "")])
  show(label = "to_upper", value = [string.to_upper(value = "straße"), string.to_upper(value = "ﬁ"), string.to_upper(value = "")])
  show(label = "to_lower", value = [string.to_lower(value = "ΟΔΟΣ"), string.to_lower(value = "ÀÉ"), string.to_lower(value = "")])
  console.print(text = "-- to_string")
  show(label = "scalars", value = [string.to_string(value = null), string.to_string(value = true), string.to_string(value = "s")])
  show(label = "numbers", value = [string.to_string(value = 3.0), string.to_string(value = 0.1 + 0.2), string.to_string(value = 1e21), string.to_string(value = -0.0000001), string.to_string(value = -0.0)])
  show(label = "non-finite", value = [string.to_string(value = 1e308 * 10), string.to_string(value = -1e308 * 10), string.to_string(value = (1e308 * 10) - (1e308 * 10))])
  console.print(text = "-- to_integer and to_number")
  show(label = "to_integer accepted", value = [string.to_integer(value = "-42"), string.to_integer(value = "+7"), string.to_integer(value = "007"), string.to_integer(value = "-0"), string.to_integer(value = "9007199254740991"), string.to_integer(value = "-9007199254740991")])
  show(label = "to_integer refused", value = [string.to_integer(value = "4.0"), string.to_integer(value = " 4"), string.to_integer(value = "4 "), string.to_integer(value = "1e3"), string.to_integer(value = ""), string.to_integer(value = "+"), string.to_integer(value = "+-1"), string.to_integer(value = "9007199254740992"), string.to_integer(value = "١٢")])
  show(label = "to_integer is integer-kind", value = string.to_integer(value = "3") == 3)
  show(label = "to_number accepted", value = [string.to_number(value = "1e3"), string.to_number(value = "-0.5"), string.to_number(value = "1E+2"), string.to_number(value = "-0"), string.to_number(value = "1e-400")])
  show(label = "to_number refused", value = [string.to_number(value = "01"), string.to_number(value = "1."), string.to_number(value = ".5"), string.to_number(value = "+1"), string.to_number(value = " 1"), string.to_number(value = "1e400"), string.to_number(value = "Infinity"), string.to_number(value = "NaN"), string.to_number(value = ""), string.to_number(value = "0x10")])
  show(label = "to_number is number-kind", value = [string.to_number(value = "3") == 3, string.to_number(value = "3") == 3.0])
  console.print(text = "-- padding and repetition")
  show(label = "pad_start", value = [string.pad_start(value = "7", width = 3, padding = "0"), string.pad_start(value = "a", width = 4), string.pad_start(value = "é", width = 3, padding = "😀"), string.pad_start(value = "x", width = -5)])
  show(label = "pad_end", value = [string.pad_end(value = "ab", width = 5, padding = "xy"), string.pad_end(value = "", width = 2, padding = "ab")])
  show(label = "never truncated, empty padding", value = [string.pad_start(value = "abc", width = 2), string.pad_end(value = "a", width = 3, padding = "")])
  show(label = "repeat", value = [string.repeat(value = "ab", count = 3), string.repeat(value = "ab", count = 0), string.repeat(value = "ab", count = -1), string.repeat(value = "", count = 9007199254740991)])
  attempt(label = "repeat to exactly 10000000", body = agent () -> unknown { string.length(value = string.repeat(value = "ab", count = 5000000)) })
  attempt(label = "repeat beyond the limit", body = agent () -> unknown { string.repeat(value = "ab", count = 5000001) })
  attempt(label = "pad_start beyond the limit", body = agent () -> unknown { string.pad_start(value = "a", width = 10000001) })
  attempt(label = "pad_end beyond the limit", body = agent () -> unknown { string.pad_end(value = "a", width = 10000001, padding = "-") })
  attempt(label = "pad_end already wide enough", body = agent () -> unknown { string.pad_end(value = "a", width = 10000001, padding = "") })
}
