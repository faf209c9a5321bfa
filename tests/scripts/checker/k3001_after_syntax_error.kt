// A syntax error costs its declaration one K1001; the other declarations of the module are still
// checked (language.md 4.4, 12.1), and nothing is reported about what the broken one recovered.
agent broken() -> integer {
  let a = 1 let b = 2
}

agent lexed() -> integer {
  let s: integer = "a\qb"
  s
}

agent uses() -> integer { broken() + lexed() }

agent other() -> integer { "s" }
