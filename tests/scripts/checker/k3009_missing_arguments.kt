data box[T](value: T)

agent main(b: box) -> integer { 1 }
