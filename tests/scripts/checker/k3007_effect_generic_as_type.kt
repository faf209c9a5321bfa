agent run[effect E](body: agent () -> E) -> null { null }

agent main() -> null { null }
