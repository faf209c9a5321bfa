// A private value thrown where the declared throw row's type is public is K3001 (`language.md`
// §7.7 rule 7). The message names the private value as the cause, and the help suggests the
// declared row joined with what the body throws, so it never repeats the declaration: `of private`
// on a whole record type does not make a field written inside it private.
agent plain(secret: string of private) -> string with prelude.throw[string] {
  prelude.throw(error = secret)
}

agent union(secret: string of private) -> string with prelude.throw[string | integer] {
  prelude.throw(error = secret)
}

agent whole(secret: string of private) -> string with prelude.throw[{ msg: string } of private] {
  prelude.throw(error = { msg = secret })
}

agent fine(secret: string of private) -> string with prelude.throw[{ msg: string of private }] {
  prelude.throw(error = { msg = secret })
}
