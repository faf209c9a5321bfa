// The `time` module (`prelude.md` §16): the clock and sleeping.

@"The current time as Unix epoch milliseconds (a whole number)."
external agent now() -> number with io from "time"

@"Pauses the calling computation for at least `milliseconds`; zero or less returns at once."
external agent sleep(milliseconds: integer) -> null with io from "time"
