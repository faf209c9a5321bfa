// `language.md` §6.8: an effect generic's `extends` bound is checked at every instantiation,
// here the one inferred from the argument's row.
request tick() -> integer

agent run[effect E extends tick](f: agent () -> integer with E) -> integer with E { f() }

agent main() -> integer with io {
  run(f = agent () -> integer {
    console.print(text = "side effect")
    1
  })
}
