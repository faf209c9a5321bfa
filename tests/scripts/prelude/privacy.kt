// The private flag through the prelude (language.md §8.6 rules 3–4, prelude.md §0.1): structural
// natives keep each value's own flag and mark a container only when one it is copied from is
// private (or a private index, bound or key shapes it); every other native's result is private
// when any part of its argument is. The run result shows which parts are redacted.

agent letters(t: string of private) -> array[string] of private { string.split(value = t, separator = "") }

agent main() -> unknown of private {
  let token = env.get_secret(key = "PRELUDE_GOLDEN_TOKEN")
  let n = string.length(value = token)
  let xs = ["pub", token]
  let hidden = letters(t = token)
  let r = { a = "pub", s = token }
  {
    get_public = array.get(target = xs, index = 0),
    get_private = array.get(target = xs, index = 1),
    get_by_private_index = array.get(target = ["x", "y"], index = n - 4),
    get_from_private_array = array.get(target = hidden, index = 0),
    append = array.append(target = xs, value = "new"),
    append_to_private = array.append(target = hidden, value = "new"),
    concat = array.concat(left = xs, right = ["z"]),
    concat_private = array.concat(left = hidden, right = ["z"]),
    slice = array.slice(target = xs, start = 0, end = 2),
    slice_private_bound = array.slice(target = ["x", "y"], start = 0, end = n),
    flatten = array.flatten(target = [xs, ["q"]]),
    flatten_private_inner = array.flatten(target = [hidden, ["q"]]),
    reverse = array.reverse(target = xs),
    empty = array.empty(),
    length = array.length(target = xs),
    contains = array.contains(target = xs, value = "pub"),
    index_of = array.index_of(target = xs, value = "pub"),
    sort = array.sort(target = xs),
    range = array.range(start = 0, end = n - 2),
    record_get_public = record.get(target = r, key = "a"),
    record_get_private = record.get(target = r, key = "s"),
    record_set = record.set(target = record.empty(), key = "Authorization", value = token),
    record_set_private_key = record.set(target = { a = 1 }, key = token, value = 2),
    record_remove = record.remove(target = r, key = "a"),
    record_merge = record.merge(left = r, right = { b = "pub" }),
    record_entries = record.entries(target = r),
    record_values = record.values(target = r),
    record_keys = record.keys(target = r),
    record_has = record.has(target = r, key = "a"),
    record_size = record.size(target = r),
    string_length = n,
    equality = token == "abcd",
    concat_operator = "a" ++ token,
    template = f"x${token}",
    to_text = json.to_text(value = r),
    public_after_all = "public",
  }
}
