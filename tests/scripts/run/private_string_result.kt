agent main() -> string of private {
  env.get_secret(key = "KATARI_GOLDEN_TOKEN")
}
