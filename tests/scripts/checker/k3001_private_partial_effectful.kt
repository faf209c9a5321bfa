// A partial application of an effectful callee that captures a private argument for a public
// parameter is K3001 at the argument already (`language.md` §7.7 rule 3: impure calls do not
// lift), whatever the residual is declared to return.
agent log(line: string, level: string) -> null with io { console.print(text = f"${level}: ${line}") }

agent logger(secret: string of private) -> agent (level: string) -> null of private with io {
  log(line = secret, level = _)
}
