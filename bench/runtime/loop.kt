// A counted loop with `var` state: sums 0 .. n-1 with `next … with`.
agent main(n: integer ?= 1000000) -> integer {
  for (let i in array.range(start = 0, end = n), var total: integer = 0) {
    next null with { total = total + i }
  } then (_) { total }
}
