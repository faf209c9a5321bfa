agent double(value: integer) -> integer { value * 2 }

agent main() -> integer {
  double(value = "two")
}
