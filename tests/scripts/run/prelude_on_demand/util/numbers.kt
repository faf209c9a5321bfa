agent biggest() -> integer {
  math.max(left = 3, right = 7)
}
