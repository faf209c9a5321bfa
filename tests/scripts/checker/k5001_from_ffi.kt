external agent native_sum(a: integer, b: integer) -> integer from "ffi"

agent main() -> integer { native_sum(a = 1, b = 2) }
