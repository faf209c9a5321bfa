// The `string` module (`prelude.md` §5). Positions and lengths count Unicode code points.

@"The number of code points in `value`."
primitive agent length(value: string) -> integer

@"The pieces of `value` between the occurrences of `separator`; an empty separator splits into single code points."
primitive agent split(value: string, separator: string) -> array[string]

@"The `parts` concatenated with `separator` between them."
primitive agent join(parts: array[string], separator: string) -> string

@"The code points of `value` from `start` (inclusive) to `end` (exclusive), both clamped to the string."
primitive agent slice(value: string, start: integer, end: integer) -> string

@"Whether `search` occurs in `value`; the empty search is always found."
primitive agent contains(value: string, search: string) -> boolean

@"Whether `value` starts with `search`."
primitive agent starts_with(value: string, search: string) -> boolean

@"Whether `value` ends with `search`."
primitive agent ends_with(value: string, search: string) -> boolean

@"The code-point index of the first occurrence of `search` in `value`, or null."
primitive agent index_of(value: string, search: string) -> integer | null

@"`value` with every non-overlapping occurrence of `search` replaced by `replacement`, both taken literally."
primitive agent replace(value: string, search: string, replacement: string) -> string

@"`value` without leading and trailing white space."
primitive agent trim(value: string) -> string

@"`value` in upper case (Unicode default case mapping, no locale)."
primitive agent to_upper(value: string) -> string

@"`value` in lower case (Unicode default case mapping, no locale)."
primitive agent to_lower(value: string) -> string

@"The text of a scalar: null, true, false, a number as JavaScript prints it, or a string unchanged. Use `json.to_text` for composite values."
primitive agent to_string(value: null | boolean | number | string) -> string

@"The integer written in `value` (an optional sign and decimal digits, nothing else), or null."
primitive agent to_integer(value: string) -> integer | null

@"The number written in `value` in JSON number syntax, or null; the result is always number-kind."
primitive agent to_number(value: string) -> number | null

@"`value` padded at the start with repetitions of `padding` until it is `width` code points long; never truncated."
primitive agent pad_start(value: string, width: integer, padding: string ?= " ") -> string

@"`value` padded at the end with repetitions of `padding` until it is `width` code points long; never truncated."
primitive agent pad_end(value: string, width: integer, padding: string ?= " ") -> string

@"`count` copies of `value` concatenated (empty when `count` is 0 or less)."
primitive agent repeat(value: string, count: integer) -> string
