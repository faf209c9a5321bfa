//! The integer tier's loops agree with the tree walker: values, kinds, give-ups, panics, step
//! limits and interruption, on programs checked against the real `prelude` and `prelude.array`
//! declarations (with `array.range` implemented here, as the prelude crate implements it).

use crate::machine::Machine;
use crate::test_support::{lowered, outcome};

fn tiered(machine: &Machine, name: &str) -> bool {
    machine
        .funs
        .iter()
        .any(|f| &*f.name == name && f.tier.is_some())
}

/// The outcome with the integer tier, and with every integer form removed.
fn both_ways(text: &str, step_limit: u64, interrupted: bool) -> (String, String) {
    let mut with = lowered(text);
    with.step_limit = step_limit;
    let mut without = lowered(text);
    without.step_limit = step_limit;
    for f in &mut without.funs {
        f.tier = None;
    }
    (outcome(with, interrupted), outcome(without, interrupted))
}

const LOOPS: &str = "\
agent sum(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var total: integer = 0) {
    next null with { total = total + i }
  } then (_) { total }
}
agent mix(seed: integer) -> integer {
  for (let j in array.range(start = 0, end = 1000), var acc = seed) {
    next with { acc = (acc * 31 + j) % 1000003 }
  } then { acc }
}
agent nested(n: integer) -> integer {
  for (let i in array.range(start = 0 - 3, end = n), var a = 1, var b = 0) {
    let inner = for (let j in array.range(start = i, end = n), var s = 0) {
      if (j % 3 == 0) { next with { s = s + j } }
      if (j > i + 5) { break s * 2 }
      next with { s = s - 1 }
    } then { s }
    if (inner > 40) { next with { a = b, b = a } }
    next 7 with { a = a + inner, b = b * 2 % 97 + a }
  } then (_) { a * 1000 + b }
}
agent outer_jumps(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var count = 0) {
    let found = for (let j in array.range(start = 0, end = n), var k = 0) {
      if (j == i) { break j * 10 }
      if (i + j == 15) { return count }
      next with { k = k + 1 }
    } then { k }
    next with { count = count + found + 100 }
  } then { count }
}
agent early(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n)) {
    if (i * i > n) { return i }
    next null
  } then { 0 - 1 }
}
agent empty(n: integer) -> integer {
  for (let _ in array.range(start = n, end = 0), var k = 5) { next with { k = k + 1 } } then { k }
}
";

#[test]
fn counted_loops_get_an_integer_form_and_agree_with_the_tree_walker() {
    let text = format!(
        "{LOOPS}agent main() -> unknown {{\n  [sum(n = 1000), mix(seed = 17), nested(n = 30), \
         outer_jumps(n = 12), early(n = 50), early(n = 0), empty(n = 3), empty(n = 0 - 4)]\n}}\n"
    );
    let m = lowered(&text);
    for name in [
        "prog.sum",
        "prog.mix",
        "prog.nested",
        "prog.outer_jumps",
        "prog.early",
        "prog.empty",
    ] {
        assert!(tiered(&m, name), "{name} has no integer form");
    }
    let (with, without) = both_ways(&text, 0, false);
    assert_eq!(with, without);
    assert!(with.contains("Int(499500.0)"), "{with}");
}

#[test]
fn loops_whose_values_are_used_or_that_are_not_counted_have_no_integer_form() {
    let text = "\
agent values(n: integer) -> integer {
  let xs = for (let i in array.range(start = 0, end = n)) { next i * 2 }
  array.length(target = xs)
}
agent bound(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var t = 0) { next with { t = t + i } } then (all) {
    t + array.length(target = all)
  }
}
agent over(xs: array[integer]) -> integer {
  for (let x in xs, var t = 0) { next with { t = t + x } } then { t }
}
agent par(n: integer) -> integer {
  parallel for (let i in array.range(start = 0, end = n), var t = 0) { next with { t = t + i } } then { t }
}
agent main() -> unknown { [bound(n = 3), over(xs = [1, 2]), par(n = 4)] }
";
    let m = lowered(text);
    for name in ["prog.values", "prog.bound", "prog.over", "prog.par"] {
        assert!(!tiered(&m, name), "{name} should have no integer form");
    }
}

#[test]
fn loops_give_up_where_the_tree_walker_decides() {
    // An overflow to infinity part-way (the tree walker builds the number), a remainder by
    // zero (its panic), and a range beyond the limit (the native's panic).
    let text = "\
agent grow(n: integer) -> integer {
  for (let _ in array.range(start = 0, end = n), var x = 3) { next with { x = x * x } } then { x }
}
agent rem(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var x = 100) { next with { x = x % (5 - i) } } then { x }
}
agent huge(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var x = 0) { next with { x = x + i } } then { x }
}
agent caught(which: integer) -> unknown {
  use handler { request panic(msg: string) { break msg } }
  if (which == 0) { rem(n = 9) } else { huge(n = 20000000) }
}
agent main() -> unknown { [grow(n = 3), grow(n = 12), caught(which = 0), caught(which = 1)] }
";
    let m = lowered(text);
    for name in ["prog.grow", "prog.rem", "prog.huge"] {
        assert!(tiered(&m, name), "{name} has no integer form");
    }
    let (with, without) = both_ways(text, 0, false);
    assert_eq!(with, without);
    for part in ["Int(6561.0)", "Num(inf)", "too many elements"] {
        assert!(with.contains(part), "{part} in {with}");
    }
}

#[test]
fn loops_spend_steps_and_stop_like_the_tree_walker() {
    let text = format!("{LOOPS}agent main() -> unknown {{ sum(n = 5000) }}\n");
    // Under the limit: the same value; over it, the same failure.
    let (with, without) = both_ways(&text, 10_000, false);
    assert_eq!(with, without);
    assert!(with.contains("Int(12497500.0)"), "{with}");
    let (with, without) = both_ways(&text, 1_000, false);
    assert_eq!(with, without);
    assert!(with.contains("step limit exceeded"), "{with}");
    // Interrupted before it starts: the first batch of steps is refused either way.
    let (with, without) = both_ways(&text, 0, true);
    assert_eq!(with, without);
    assert!(with.contains("Interrupted"), "{with}");
}
