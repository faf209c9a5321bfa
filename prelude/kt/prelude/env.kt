// The `env` module (`prelude.md` §10): secrets and project settings. Both functions read
// configuration, not the network, so they are pure-typed primitives.

@"No secret with the requested key exists in the environment or in secrets.toml."
data missing_secret(key: string, message: string)

@"The private secret named `key`, from the process environment or else secrets.toml in the config folder."
primitive agent get_secret(key: string) -> string of private with prelude.throw[missing_secret]

@"The public settings of the `[env]` table of the project's katari.toml, or an empty record."
primitive agent get_all() -> record[string]
