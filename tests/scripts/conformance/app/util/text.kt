@"Upper-cases and exclaims."
agent shout(value: string) -> string { string.to_upper(value = value) ++ "!" }

data tagged(label: string)
