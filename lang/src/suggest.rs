//! "Did you mean" suggestions: the closest of some candidate names by edit distance, shared by
//! the resolver's diagnostics, the host's configuration validation and the REPL.

/// The edit distance (insertions, deletions, substitutions) between two names, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// The candidate closest to `name` within edit distance 2 (and closer than the name is long),
/// alphabetically first among equals; `name` itself is never suggested.
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let len = name.chars().count();
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= 2 && *d < len)
        .min()
        .map(|(_, c)| c)
}
