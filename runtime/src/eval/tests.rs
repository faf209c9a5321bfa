//! Handler state kept in its owner's context while no other thread can reach the frame
//! (`HFrame::local`) behaves as state behind the frame's lock: the same answers and final
//! state before and after a fork shares the frame, for quick clauses, their fall-backs and
//! clauses run in full, and no tick is lost when parallel branches perform.

use crate::test_support::{lowered, value};
use crate::value::{V, Value};

const PROGRAM: &str = "\
request tick() -> integer
request big() -> integer
request slow(k: integer) -> integer

agent run(shared: boolean) -> unknown {
  use handler (var n = 0, var b = 10) {
    request tick() { next n with { n = n + 1 } }
    request big() { next b with { b = b * 1000000000 } }
  } then (r) { [r, n, b] }
  use handler (var calls = 0) {
    request slow(k: integer) {
      let m = tick() + k
      next m with { calls = calls + 1 }
    }
  } then (r) { [r, calls] }
  if (shared) {
    let _ = parallel for (let i in array.range(start = 0, end = 2)) { next i }
  }
  for (let i in array.range(start = 0, end = 40), var t = 0, var g = 0) {
    let x = tick()
    let y = slow(k = i)
    let z = big()
    next with { t = t + x + y, g = z }
  } then { [t, g] }
}

agent branches() -> unknown {
  use handler (var n = 0) {
    request tick() { next n with { n = n + 1 } }
  } then (r) { [r, n] }
  let seen = parallel for (let i in array.range(start = 0, end = 50)) { next tick() }
  let more = for (let i in array.range(start = 0, end = 5), var s = 0) {
    let t = tick()
    next with { s = s + t }
  } then { s }
  for (let x in seen, var s = 0) { next with { s = s + x } } then { [s, more] }
}

agent main() -> unknown { [run(shared = false), run(shared = true), branches()] }
";

#[test]
fn handler_state_kept_locally_agrees_with_the_shared_state() {
    let v = value(lowered(PROGRAM)).expect("main runs");
    let V::Array(runs) = &v.v else {
        panic!("not an array: {v:?}")
    };
    let [direct, shared, branches] = &runs[..] else {
        panic!("three results: {v:?}")
    };
    // The quick `big` clause overflowed and fell back to the full clause.
    assert!(show(direct).contains("inf"), "{}", show(direct));
    assert_eq!(format!("{direct:?}"), format!("{shared:?}"));
    // 50 branches and 5 more ticks: the answers 0..49 and 50..54, none lost or repeated.
    assert_eq!(show(branches), "[[1225,260],55]");
}

/// Integers, numbers and arrays as text (`inf` for an infinite number).
fn show(v: &Value) -> String {
    match &v.v {
        V::Int(n) => format!("{n}"),
        V::Num(n) => format!("{n}n"),
        V::Array(items) => format!("[{}]", items.iter().map(show).collect::<Vec<_>>().join(",")),
        _ => format!("{v:?}"),
    }
}

#[test]
fn fields_of_small_and_large_records_are_found_alike() {
    use crate::value::record_with_capacity;
    // Up to `SMALL_RECORD` keys are compared in order, more are hashed.
    for n in [0, 1, 2, 7, 8, 9, 20] {
        let mut r = record_with_capacity(n);
        for i in 0..n {
            r.insert(format!("k{i}").into(), Value::int(i as f64));
        }
        let v = Value::record(r);
        for i in 0..n {
            let x = super::field(&v, &format!("k{i}"));
            assert!(
                matches!(x.v, V::Int(k) if k == i as f64) && !x.private(),
                "{n} {i}"
            );
        }
        assert!(super::field(&v, "absent").is_null(), "{n}");
        assert!(super::field(&v, "k").is_null(), "{n}");
        let hidden = v.clone().with_private(true);
        assert!(super::field(&hidden, "absent").private(), "{n}");
        if n > 0 {
            assert!(super::field(&hidden, "k0").private(), "{n}");
        }
    }
}
