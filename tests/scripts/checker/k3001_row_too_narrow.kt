request tick() -> integer

agent count() -> integer with pure {
  tick() + 1
}

agent main() -> integer { 0 }
