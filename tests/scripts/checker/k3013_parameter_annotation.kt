agent double(value) -> integer { 2 }

agent main() -> integer { double(value = 1) }
