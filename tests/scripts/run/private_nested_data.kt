// Data values among run arguments are marked private where their fields' types say
// `of private`, also through a generic's instantiation (`box[string of private]`). A recursive
// type with a private field is marked private as a whole where it recurs (it redacts more,
// never less).
data cred(user: string, token: string of private)
data box[T](value: T)
data node(secret: string of private, label: string, rest: node | null)

agent main(c: cred, hidden: box[string of private], shown: box[string], n: node) -> unknown {
  { c = c, token = c.token, hidden = hidden, shown = shown, n = n }
}
