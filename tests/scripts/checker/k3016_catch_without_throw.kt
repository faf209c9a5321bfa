agent main() -> integer {
  let caught = prelude.catch(body = agent () -> integer { 1 })
  1
}
