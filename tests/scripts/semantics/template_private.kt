// A template whose number part is private is private as a whole (`language.md` §8.6 rule 4), also
// when the number's text is written in place: the run's result is redacted, not `[6]`.
agent main() -> string of private {
  let n = string.length(value = env.get_secret(key = "KATARI_GOLDEN_TOKEN"))
  f"[${string.to_string(value = n)}]"
}
