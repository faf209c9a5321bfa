// The `console` module (`prelude.md` §15): lines on stdout and stderr, flushed immediately so
// they appear before the run's result.

@"Writes `text` and a newline to standard output; a private text is written redacted."
external agent print(text: string) -> null with io from "console"

@"Writes `text` and a newline to standard error; a private text is written redacted."
external agent error(text: string) -> null with io from "console"
