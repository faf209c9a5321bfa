data point(x: integer, y: integer)

agent main(p: point) -> string { json.to_text(value = p) }
