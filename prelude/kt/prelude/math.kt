// The `math` module (`prelude.md` §6). `floor`, `ceil` and `round` are the only conversions from
// numbers to integers.

@"The absolute value of `value`, keeping its kind."
primitive agent abs[T extends number](value: T) -> T

@"The smaller of `left` and `right`."
primitive agent min[T extends number](left: T, right: T) -> T

@"The larger of `left` and `right`."
primitive agent max[T extends number](left: T, right: T) -> T

@"`value` rounded down to an integer; a non-finite value panics."
primitive agent floor(value: number) -> integer

@"`value` rounded up to an integer; a non-finite value panics."
primitive agent ceil(value: number) -> integer

@"`value` rounded to the nearest integer, ties away from zero; a non-finite value panics."
primitive agent round(value: number) -> integer

@"`base` raised to `exponent`; a non-finite result panics."
primitive agent pow(base: number, exponent: number) -> number

@"The square root of `value`; a negative operand panics."
primitive agent sqrt(value: number) -> number
