request tick() -> integer

agent main(t: tick) -> integer { 1 }
