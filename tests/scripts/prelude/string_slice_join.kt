// string.slice counts code points (ASCII and non-ASCII texts, clamped and empty ranges) and
// string.join writes separators only between parts (`prelude.md` §3).
agent main() -> string {
  let t = "héllo wörld ✓ done"
  let a = "plain ascii text"
  let parts = [string.slice(value = t, start = 1, end = 4), string.slice(value = t, start = 12, end = 100), string.slice(value = t, start = -3, end = 2), string.slice(value = t, start = 5, end = 3), string.slice(value = a, start = 6, end = 11), string.slice(value = a, start = 6, end = 99), string.slice(value = t, start = 13, end = 14)]
  f"${string.join(parts = parts, separator = "|")}|${string.join(parts = [], separator = ",")}|${string.join(parts = ["x"], separator = ",")}|${string.join(parts = ["a", "", "b"], separator = "--")}"
}
