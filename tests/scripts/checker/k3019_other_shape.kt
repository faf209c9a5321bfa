agent provide[R, effect E](continuation: agent (value: null) -> R with E) -> R with E {
  continuation(value = null)
}

agent main(flag: boolean) -> integer {
  use if (flag) { provide[integer, pure] } else { provide[integer, pure] }
  1
}
