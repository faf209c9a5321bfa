// Handlers as dependency injection: the app performs requests for a clock, a logger and a store,
// and provider agents decide what answers them (production services or deterministic test fakes).
// Run it with `katari run examples/handlers_di.kt` (fakes) or add `-a live=true` (real services).

@"The current time in epoch milliseconds."
request clock() -> integer

@"Records one log line."
request log(line: string) -> null

@"The value stored under `key`, or null."
request store_get(key: string) -> string | null

@"Stores `value` under `key`."
request store_put(key: string, value: string) -> null

@"Checks a guest in: greets them, remembers when they came, and logs what happened."
agent check_in(guest: string) -> string with clock | log | store_get | store_put {
  let now = clock()
  let previous = store_get(key = guest)
  store_put(key = guest, value = string.to_string(value = now))
  match (previous) {
    case null -> {
      log(line = f"new guest ${guest}")
      f"welcome, ${guest}"
    }
    case last -> {
      log(line = f"${guest} returns")
      f"welcome back, ${guest} (last seen at ${last})"
    }
  }
}

@"The morning's check-ins."
agent morning() -> array[string] with clock | log | store_get | store_put {
  [check_in(guest = "ada"), check_in(guest = "bo"), check_in(guest = "ada")]
}

@"Production services: the system clock, log lines on stderr, and an in-memory store that starts empty."
agent with_production[R, effect E](
  continuation: agent (value: null) -> R with {...E, clock, log, store_get, store_put},
) -> R with E | io {
  use handler (var saved: record[string] = record.empty()) {
    request clock() { next math.round(value = time.now()) }
    request log(line: string) { next console.error(text = f"[log] ${line}") }
    request store_get(key: string) { next record.get(target = saved, key = key) }
    request store_put(key: string, value: string) {
      next null with { saved = record.set(target = saved, key = key, value = value) }
    }
  }
  continuation(value = null)
}

@"Test services: a clock that advances one minute per reading, a store seeded with `seed`, and a log that is captured and returned next to the result instead of printed."
agent with_fakes[R, effect E](
  seed: record[string],
  continuation: agent (value: null) -> R with {...E, clock, log, store_get, store_put},
) -> { result: R, log: array[string] } with E {
  use handler (var minute = 0, var saved: record[string] = seed, var lines: array[string] = []) {
    request clock() { next minute * 60000 with { minute = minute + 1 } }
    request log(line: string) { next null with { lines = array.append(target = lines, value = line) } }
    request store_get(key: string) { next record.get(target = saved, key = key) }
    request store_put(key: string, value: string) {
      next null with { saved = record.set(target = saved, key = key, value = value) }
    }
  } then (result) {
    { result = result, log = lines }
  }
  continuation(value = null)
}

@"Runs the morning against the test fakes, with `bo` already known to the store."
agent rehearse() -> string {
  let outcome = {
    use with_fakes(seed = { bo = "0" })
    morning()
  }
  f"${string.join(parts = outcome.result, separator = " | ")}\nlog: ${string.join(parts = outcome.log, separator = "; ")}"
}

@"Runs the morning against the production services."
agent run_live() -> string with io {
  use with_production
  string.join(parts = morning(), separator = " | ")
}

@"Runs the check-ins with the test fakes, or with the production services when `live` is true."
agent main(live: boolean ?= false) -> string {
  if (live) { run_live() } else { rehearse() }
}
