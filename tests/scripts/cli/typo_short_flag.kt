// `-b` is one edit from each of `-a`, `-h` and `-V`: no single nearest spelling to name.
agent main() -> string { "unused" }
