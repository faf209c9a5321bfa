// Typed errors raised with prelude.throw and caught with handler clauses and prelude.catch, and
// panics caught with the ambient `panic` clause. Run it with `katari run examples/errors.kt`.

@"A withdrawal larger than the balance."
data insufficient_funds(balance: integer, requested: integer, message: string)

@"An amount that is zero or negative."
data invalid_amount(amount: integer, message: string)

// Errors are ordinary data types; a union of them is the payload type of the throw.
type bank_error = insufficient_funds | invalid_amount

@"The balance left after taking `amount` from `balance`; throws when that is not possible."
agent withdraw(balance: integer, amount: integer) -> integer with prelude.throw[bank_error] {
  if (amount <= 0) {
    prelude.throw(error = invalid_amount(amount = amount, message = "amounts must be positive"))
  } else if (amount > balance) {
    let text = f"cannot take ${string.to_string(value = amount)} from ${string.to_string(value = balance)}"
    prelude.throw(error = insufficient_funds(balance = balance, requested = amount, message = text))
  } else {
    balance - amount
  }
}

@"Describes a withdrawal, catching every error with a handler clause for the whole union."
agent try_withdraw(balance: integer, amount: integer) -> string {
  use handler {
    request prelude.throw(error: bank_error) -> never {
      match (error) {
        case insufficient_funds(message) -> { break f"refused: ${message}" }
        case invalid_amount(amount => bad) -> { break f"invalid amount ${string.to_string(value = bad)}" }
      }
    }
  }
  let left = withdraw(balance = balance, amount = amount)
  f"ok, ${string.to_string(value = left)} left"
}

@"Empties the account instead of failing when the amount is too large; invalid amounts are re-raised to the caller."
agent withdraw_at_most(balance: integer, amount: integer) -> integer with prelude.throw[invalid_amount] {
  use handler {
    request prelude.throw(error: bank_error) -> never {
      match (error) {
        case insufficient_funds() -> { break 0 }
        case other -> prelude.throw(error = other)
      }
    }
  }
  withdraw(balance = balance, amount = amount)
}

@"Describes a withdrawal by turning its error into a value with prelude.catch."
agent describe(balance: integer, amount: integer) -> string {
  match (prelude.catch(body = agent () -> integer { withdraw(balance = balance, amount = amount) })) {
    case insufficient_funds(requested) -> f"short by ${string.to_string(value = requested - balance)}"
    case invalid_amount(message) -> f"invalid: ${message}"
    case left -> f"${string.to_string(value = left)} left"
  }
}

@"Describes `withdraw_at_most`, catching the invalid amounts it re-raises."
agent cap(balance: integer, amount: integer) -> string {
  match (prelude.catch(body = agent () -> integer { withdraw_at_most(balance = balance, amount = amount) })) {
    case invalid_amount(message) -> f"re-raised: ${message}"
    case left -> f"at most: ${string.to_string(value = left)} left"
  }
}

@"The average of `values`; a division by zero panics, and the ambient clause turns the panic into a message."
agent average(values: array[integer]) -> string {
  use handler { request panic(msg: string) { break f"no average: ${msg}" } }
  let total = for (let v in values, var sum = 0) { next with { sum = sum + v } } then { sum }
  string.to_string(value = total / array.length(target = values))
}

@"Runs each kind of failure once and returns one line per case."
agent main() -> string {
  string.join(parts = [
    try_withdraw(balance = 100, amount = 30),
    try_withdraw(balance = 100, amount = 300),
    try_withdraw(balance = 100, amount = 0),
    cap(balance = 50, amount = 80),
    cap(balance = 50, amount = -1),
    describe(balance = 10, amount = 25),
    describe(balance = 10, amount = 4),
    average(values = [1, 2, 3, 4]),
    average(values = []),
  ], separator = "\n")
}
