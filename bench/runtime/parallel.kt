// `parallel for`: CPU work per element (a 1000-step loop with state in a called agent), results
// gathered in source order and summed.
agent work(seed: integer) -> integer {
  for (let j in array.range(start = 0, end = 1000), var acc: integer = seed) {
    next null with { acc = (acc * 31 + j) % 1000003 }
  } then (_) { acc }
}

agent main(n: integer ?= 1000) -> integer {
  let results = parallel for (let i in array.range(start = 0, end = n)) { next work(seed = i) }
  for (let r in results, var total: integer = 0) {
    next null with { total = total + r }
  } then (_) { total }
}
