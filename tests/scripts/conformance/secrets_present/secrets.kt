agent main() -> { user: string, token: string of private, length: integer of private, other: string } {
  let token = env.get_secret(key = "KATARI_DEMO_TOKEN")
  let other = {
    use handler {
      request prelude.throw(error: env.missing_secret) -> never { break f"no secret under ${error.key}" }
    }
    let unused = env.get_secret(key = "KATARI_SURELY_UNSET_KEY")
    "present"
  }
  { user = "ada", token = token, length = string.length(value = token), other = other }
}
