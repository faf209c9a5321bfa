agent pick(flag: boolean) -> integer {
  if (flag) { return "yes" }
  0
}

agent main() -> integer { pick(flag = true) }
