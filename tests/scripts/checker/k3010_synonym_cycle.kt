type a = b | null
type b = array[a]

agent main() -> integer { 1 }
