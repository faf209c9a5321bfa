// Local and anonymous agents (`language.md` §9.14, §8.3): recursion with both annotations,
// closures keeping the `var` state current at their creation, `return` leaving only the local
// agent, and equality of callables (a closure equals only itself, top-level references by
// declaration).
request snap() -> agent (value: null) -> integer

agent top(value: integer) -> integer { value }

agent main() -> string {
  agent fact(n: integer) -> integer with pure { if (n <= 1) { 1 } else { n * fact(n = n - 1) } }
  // Each closure sees the state of the iteration that created it.
  let seen = for (let i in [1, 2, 3], var s = 0) {
    let f = agent (value: null) -> integer { s }
    next f with { s = s + i }
  } then (all) {
    array.map(target = all, apply = agent (value: agent (value: null) -> integer) -> integer { value(value = null) })
  }
  // The same in a clause: the closure keeps the handler state of its clause run.
  let kept = {
    use handler (var n = 10) {
      request snap() { next agent (value: null) -> integer { n } with { n = n + 1 } }
    }
    let a = snap()
    let b = snap()
    [a(value = null), b(value = null)]
  }
  // `return` inside a local agent returns from it, not from `main`.
  agent first_big(xs: array[integer]) -> integer {
    for (let x in xs) { if (x > 1) { return x } }
    0
  }
  let inner = for (let i in [5, 6]) {
    let find = agent (value: integer) -> integer {
      for (let x in [1, 2, 3]) { if (x == value) { return x * 10 } }
      0
    }
    find(value = 2) + i
  }
  let g = agent (value: integer) -> integer { value }
  let h = g
  let equal = [fact == fact, g == h, g == agent (value: integer) -> integer { value }, top == top, prelude.add[integer] == prelude.add[integer]]
  f"${string.to_string(value = fact(n = 10))} ${json.to_text(value = seen)} ${json.to_text(value = kept)} ${string.to_string(value = first_big(xs = [1, 2, 3]))} ${json.to_text(value = inner)} ${json.to_text(value = equal)}"
}
