// A parameter declared `of private` is private at the run's entry whether the value comes from
// the command line or from the parameter's default (§8.6 rule 2).
agent main(token: string of private ?= "s3cret-default", n: integer ?= 3) -> unknown {
  [token, string.length(value = token), n]
}
