// JSON processing: parsing text into a `json` tree and walking it with match, reading it with a
// typed shape through json.parse_as, and writing results with json.to_text and json.stringify.
// Run it with `katari run examples/json_report.kt`.

// The typed shape of the document; object types are open, so extra keys such as "note" are allowed.
type line_item = { sku: string, quantity: integer, price: number }
type order = { id: integer, customer: string, paid: boolean, items: array[line_item] }

@"One line describing the top of a JSON tree."
agent outline(doc: json.json) -> string {
  match (doc) {
    case json.json_object(entries) -> f"object with keys ${json.to_text(value = record.keys(target = entries))}"
    case json.json_array(items) -> f"array of ${string.to_string(value = array.length(target = items))}"
    case json.json_string(value) -> f"string ${value}"
    case json.json_integer(value) -> f"integer ${string.to_string(value = value)}"
    case json.json_number(value) -> f"number ${string.to_string(value = value)}"
    case json.json_boolean(value) -> f"boolean ${string.to_string(value = value)}"
    case json.json_null() -> "null"
  }
}

@"The number of scalar values (strings, numbers, booleans and nulls) anywhere in a JSON tree."
agent count_leaves(doc: json.json) -> integer with pure {
  match (doc) {
    case json.json_object(entries) -> {
      for (let [_, child] in record.entries(target = entries), var total = 0) {
        next with { total = total + count_leaves(doc = child) }
      } then { total }
    }
    case json.json_array(items) -> {
      for (let child in items, var total = 0) {
        next with { total = total + count_leaves(doc = child) }
      } then { total }
    }
    case _ -> 1
  }
}

@"Reads a small order export and reports on it."
agent main() -> string {
  use handler {
    request prelude.throw(error: json.parse_error | json.decode_error) -> never {
      match (error) {
        case json.parse_error(message) -> { break f"not JSON: ${message}" }
        case json.decode_error(message) -> { break f"unexpected shape: ${message}" }
      }
    }
  }
  let text = "{
    \"team\": \"kitchen\",
    \"orders\": [
      {\"id\": 1, \"customer\": \"ada\", \"paid\": true, \"items\": [
        {\"sku\": \"tea\", \"quantity\": 4, \"price\": 2.5}, {\"sku\": \"cake\", \"quantity\": 1, \"price\": 12}]},
      {\"id\": 2, \"customer\": \"bo\", \"paid\": false, \"items\": [{\"sku\": \"tea\", \"quantity\": 2, \"price\": 2.5}]},
      {\"id\": 3, \"customer\": \"cy\", \"paid\": false, \"items\": [], \"note\": \"call back\"}
    ]
  }"
  // Untyped: the literal tree, walked with match and with the total readers.
  let doc = json.parse(text = text)
  let fields = match (doc) {
    case json.json_object(entries) -> for (let [key, child] in record.entries(target = entries)) { next f"${key}: ${outline(doc = child)}" }
    case other -> [outline(doc = other)]
  }
  let second = json.text(target = json.field(target = json.element(target = json.field(target = doc, key = "orders"), index = 1), key = "customer"))
  // Typed: parse_as validates the document against the shape, then fields are ordinary reads.
  let report = json.parse_as[{ team: string, orders: array[order] }](text = text)
  let totals = for (let o in report.orders) {
    let total = for (let item in o.items, var sum: number = 0) {
      next with { sum = sum + item.price * item.quantity }
    } then { sum }
    next { id = o.id, customer = o.customer, total = total }
  }
  let unpaid = array.filter(target = report.orders, keep = agent (value: order) -> boolean { !value.paid })
  let summary = json.json_object(entries = {
    team = json.json_string(value = report.team),
    unpaid = json.json_integer(value = array.length(target = unpaid)),
    leaves = json.json_integer(value = count_leaves(doc = doc)),
  })
  string.join(parts = [
    string.join(parts = fields, separator = "\n"),
    f"second customer: ${second}",
    json.to_text(value = totals),
    json.stringify(value = summary),
  ], separator = "\n")
}
