// One mistake, one diagnostic: an unresolved name, a type that does not lower and a missing
// annotation each stand for the error type, which fits everywhere.
agent main(p, flag: boolean) -> string {
  let a = undefined_thing
  let b: mystery = a
  let c = if (flag) { a.field } else { b(x = 1) }
  for (let item in c) { next item.name }
  let d = p.anything
  match (b) {
    case point(x) -> x
    case _ -> f"${a}${d}"
  }
}
