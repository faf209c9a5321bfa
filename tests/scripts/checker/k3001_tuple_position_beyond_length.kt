// `language.md` §9.12: a tuple pattern matches an array of exactly its length, so a position
// beyond the subject tuple's length holds no value; it reads `null` and is never a non-null
// binding (K3001 where it is used as one).
agent third(pair: [integer, string]) -> integer {
  match (pair) {
    case [n, s, extra] -> string.length(value = extra)
    case [n, s] -> n
  }
}

agent main() -> integer { third(pair = [1, "a"]) }
