//! `mcp_search_S` (`host.md` §10.4): BM25 over the catalog, and the result objects.
//!
//! Each entry is one document: the tokens of its id, name, title, description and (for
//! prompts) argument names, together. A query's distinct tokens are its terms; the inverse
//! document frequency is the non-negative form `ln(1 + (N − n + 0.5) / (n + 0.5))`.
//!
//! The documents are tokenised once per catalog into an [`Index`] (document lengths, and per
//! term its postings: the documents holding it with their term frequencies), which lives in
//! the catalog and so is dropped exactly when the catalog is. A query then tokenises only
//! itself and scores only the postings of its own terms.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::catalog::{Catalog, Entry, Kind};

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lower-case tokens of `text`: split on every character that is not alphanumeric, and inside
/// words at camelCase boundaries (`getPullRequest` → get, pull, request; `HTMLParser` → html,
/// parser). snake_case splits at its underscores.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut scratch = String::new();
    each_token(text, &mut scratch, |t| out.push(t.to_string()));
    out
}

/// Calls `emit` with each token of `text` (see [`tokens`]), lower-cased into `scratch`, so that
/// building an index allocates only for terms it has not seen.
fn each_token(text: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_ascii() {
            // The same rule as below on bytes: for ASCII, `is_numeric` is `is_ascii_digit` and
            // lower-casing is ASCII lower-casing.
            let b = word.as_bytes();
            let mut start = 0;
            for i in 1..b.len() {
                let (prev, cur) = (b[i - 1], b[i]);
                let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
                let boundary = (prev.is_ascii_lowercase() || prev.is_ascii_digit())
                    && cur.is_ascii_uppercase()
                    || prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_lower;
                if boundary {
                    ascii_lower(&word[start..i], scratch);
                    emit(scratch);
                    start = i;
                }
            }
            if start < b.len() {
                ascii_lower(&word[start..], scratch);
                emit(scratch);
            }
            continue;
        }
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase()
                || prev.is_uppercase() && cur.is_uppercase() && next_lower;
            if boundary {
                *scratch = chars[start..i].iter().collect::<String>().to_lowercase();
                emit(scratch);
                start = i;
            }
        }
        if start < chars.len() {
            *scratch = chars[start..].iter().collect::<String>().to_lowercase();
            emit(scratch);
        }
    }
}

fn ascii_lower(text: &str, into: &mut String) {
    into.clear();
    into.push_str(text);
    into.make_ascii_lowercase();
}

/// The searchable fields of one entry, in document order.
fn fields(entry: &Entry) -> impl Iterator<Item = &str> {
    [Some(entry.id.as_str()), Some(entry.name.as_str())]
        .into_iter()
        .chain([entry.title.as_deref(), entry.description.as_deref()])
        .flatten()
        .chain(entry.arguments.iter().flatten().map(|a| a.name.as_str()))
}

/// The BM25 index of the entries a search may show (every entry but the tools `--allow-tool`
/// hides): built once per catalog, by the first search ([`Catalog::index`]).
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// The catalog position of each document; documents are numbered in catalog order.
    entries: Vec<usize>,
    /// The number of tokens of each document.
    lengths: Vec<u32>,
    /// The average document length.
    avgdl: f64,
    /// Each term's number, indexing `postings`.
    terms: HashMap<Box<str>, u32>,
    /// Per term, the documents holding it with the term's frequency there, in document order.
    postings: Vec<Vec<(u32, u32)>>,
    /// The lower-cased id and name of each document, to the documents bearing them (§10.4.1:
    /// an exact id or name ranks first).
    names: HashMap<String, Vec<u32>>,
}

impl Index {
    /// The index of the entries of `entries` for which `visible` holds.
    pub fn new(entries: &[Entry], visible: impl Fn(&Entry) -> bool) -> Index {
        let mut index = Index::default();
        let mut scratch = String::new();
        let mut doc_terms: Vec<u32> = Vec::new();
        let mut total = 0usize;
        for (at, entry) in entries.iter().enumerate().filter(|(_, e)| visible(e)) {
            let doc = index.entries.len() as u32;
            index.entries.push(at);
            doc_terms.clear();
            for field in fields(entry) {
                each_token(field, &mut scratch, |t| {
                    let next = index.postings.len() as u32;
                    let term = match index.terms.get(t) {
                        Some(&term) => term,
                        None => {
                            index.terms.insert(t.into(), next);
                            index.postings.push(Vec::new());
                            next
                        }
                    };
                    doc_terms.push(term);
                });
            }
            index.lengths.push(doc_terms.len() as u32);
            total += doc_terms.len();
            doc_terms.sort_unstable();
            for run in doc_terms.chunk_by(|a, b| a == b) {
                index.postings[run[0] as usize].push((doc, run.len() as u32));
            }
            let id = entry.id.to_lowercase();
            let name = entry.name.to_lowercase();
            if name != id {
                index.names.entry(name).or_default().push(doc);
            }
            index.names.entry(id).or_default().push(doc);
        }
        if !index.entries.is_empty() {
            index.avgdl = total as f64 / index.entries.len() as f64;
        }
        index
    }

    /// The number of documents (the entries a search may show).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The ranked entries for `query`: catalog positions with their scores, at most `top_k`.
    /// Entries whose id or name equals the query (ignoring case) come first, then the others
    /// scoring above 0, each group by score, ties in catalog order. An empty query (no tokens)
    /// gives the first `top_k` in catalog order with score 0.
    pub fn rank(&self, query: &str, top_k: usize) -> Vec<(usize, f64)> {
        let tokens = tokens(query);
        if tokens.is_empty() {
            return self
                .entries
                .iter()
                .take(top_k)
                .map(|&at| (at, 0.0))
                .collect();
        }
        let mut terms: Vec<&str> = Vec::new();
        for t in &tokens {
            if !terms.contains(&t.as_str()) {
                terms.push(t);
            }
        }
        let n = self.entries.len();
        let mut scores = vec![0.0f64; n];
        // Each term adds its part to every document holding it, terms in query order: the same
        // sums, to the bit, as adding every term's part (0 where absent) per document.
        for term in terms {
            let Some(&t) = self.terms.get(term) else {
                continue;
            };
            let postings = &self.postings[t as usize];
            let containing = postings.len() as f64;
            let idf = (1.0 + (n as f64 - containing + 0.5) / (containing + 0.5)).ln();
            for &(doc, f) in postings {
                let (f, len) = (f as f64, self.lengths[doc as usize] as f64);
                scores[doc as usize] +=
                    idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / self.avgdl));
            }
        }
        let exact: &[u32] = self
            .names
            .get(&query.trim().to_lowercase())
            .map_or(&[], Vec::as_slice);
        let mut ranked: Vec<(u32, f64, bool)> = scores
            .iter()
            .enumerate()
            .map(|(doc, &s)| (doc as u32, s, exact.contains(&(doc as u32))))
            .filter(|&(_, s, exact)| exact || s > 0.0)
            .collect();
        // Exact matches first, then by score, then in catalog order: a total order, so only the
        // first `top_k` need sorting.
        let order = |a: &(u32, f64, bool), b: &(u32, f64, bool)| {
            b.2.cmp(&a.2).then(b.1.total_cmp(&a.1)).then(a.0.cmp(&b.0))
        };
        if top_k == 0 {
            return Vec::new();
        }
        if ranked.len() > top_k {
            ranked.select_nth_unstable_by(top_k - 1, order);
            ranked.truncate(top_k);
        }
        ranked.sort_unstable_by(order);
        ranked
            .into_iter()
            .map(|(doc, s, _)| (self.entries[doc as usize], s))
            .collect()
    }
}

/// A score rounded to 2 decimals.
fn rounded(score: f64) -> f64 {
    (score * 100.0).round() / 100.0
}

/// One result object (§10.4.3): optional fields only when the server gave them.
pub fn result(entry: &Entry, score: f64) -> Value {
    let mut o = Map::new();
    o.insert("kind".into(), json!(entry.kind.as_str()));
    o.insert("id".into(), json!(entry.id));
    o.insert("name".into(), json!(entry.name));
    if let Some(t) = &entry.title {
        o.insert("title".into(), json!(t));
    }
    if let Some(d) = &entry.description {
        o.insert("description".into(), json!(d));
    }
    if let Some(m) = &entry.mime_type {
        o.insert("mime_type".into(), json!(m));
    }
    if let Some(s) = entry.size {
        o.insert("size".into(), json!(s));
    }
    if let Some(a) = &entry.audience {
        o.insert("audience".into(), json!(a));
    }
    if let Some(args) = &entry.arguments
        && entry.kind == Kind::Prompt
    {
        let list: Vec<Value> = args
            .iter()
            .map(|a| json!({"name": a.name, "required": a.required}))
            .collect();
        o.insert("arguments".into(), Value::Array(list));
    }
    o.insert("score".into(), json!(rounded(score)));
    Value::Object(o)
}

/// The whole search result over the entries of `catalog` that `index` holds.
pub fn response(
    server: &str,
    query: &str,
    top_k: usize,
    catalog: &Catalog,
    index: &Index,
) -> Value {
    let results: Vec<Value> = index
        .rank(query, top_k)
        .into_iter()
        .map(|(at, score)| result(&catalog.entries[at], score))
        .collect();
    let mut o = Map::new();
    o.insert("server".into(), json!(server));
    o.insert("query".into(), json!(query));
    o.insert("total_items".into(), json!(index.len()));
    o.insert("results".into(), Value::Array(results));
    if !catalog.unavailable.is_empty() {
        o.insert("unavailable".into(), super::catalog::unavailable(catalog));
    }
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::super::catalog::Argument;
    use super::*;

    fn entry(kind: Kind, id: &str, description: &str) -> Entry {
        Entry {
            kind,
            id: id.into(),
            raw_id: id.into(),
            name: id.into(),
            title: None,
            description: (!description.is_empty()).then(|| description.into()),
            mime_type: None,
            size: None,
            audience: None,
            arguments: None,
            input_schema: None,
            output_schema: None,
            annotations: None,
        }
    }

    fn index(entries: &[Entry]) -> Index {
        Index::new(entries, |_| true)
    }

    /// BM25 as the spec states it, computed from scratch for every query: every document
    /// tokenised, each term's document frequency counted over all of them. The reference the
    /// index must agree with.
    fn reference(entries: &[&Entry], query: &str, top_k: usize) -> Vec<(usize, f64)> {
        let terms = tokens(query);
        if terms.is_empty() {
            return (0..entries.len().min(top_k)).map(|i| (i, 0.0)).collect();
        }
        let docs: Vec<Vec<String>> = entries
            .iter()
            .map(|e| fields(e).flat_map(tokens).collect())
            .collect();
        let n = docs.len() as f64;
        let avgdl = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
        let mut unique: Vec<&String> = Vec::new();
        for t in &terms {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        let idf: Vec<f64> = unique
            .iter()
            .map(|t| {
                let containing = docs.iter().filter(|d| d.contains(t)).count() as f64;
                (1.0 + (n - containing + 0.5) / (containing + 0.5)).ln()
            })
            .collect();
        let wanted = query.trim().to_lowercase();
        let mut ranked: Vec<(usize, f64, bool)> = docs
            .iter()
            .enumerate()
            .map(|(i, doc)| {
                let len = doc.len() as f64;
                let score: f64 = unique
                    .iter()
                    .zip(&idf)
                    .map(|(t, idf)| {
                        let f = doc.iter().filter(|w| w == t).count() as f64;
                        if f == 0.0 {
                            0.0
                        } else {
                            idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avgdl))
                        }
                    })
                    .sum();
                let e = entries[i];
                let exact = e.id.to_lowercase() == wanted || e.name.to_lowercase() == wanted;
                (i, score, exact)
            })
            .filter(|&(_, s, exact)| exact || s > 0.0)
            .collect();
        // Stable: ties keep catalog order.
        ranked.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.total_cmp(&a.1)));
        ranked.truncate(top_k);
        ranked.into_iter().map(|(i, s, _)| (i, s)).collect()
    }

    #[test]
    fn tokens_split_case_and_punctuation() {
        assert_eq!(tokens("getPullRequest"), ["get", "pull", "request"]);
        assert_eq!(tokens("HTMLParser v2"), ["html", "parser", "v2"]);
        assert_eq!(
            tokens("list_issues/by-repo"),
            ["list", "issues", "by", "repo"]
        );
        assert_eq!(tokens("Ünïcode Wörds"), ["ünïcode", "wörds"]);
        assert_eq!(
            tokens("ÜberHTMLParser2Go"),
            ["über", "html", "parser2", "go"]
        );
        assert_eq!(tokens("v2Api ID3Tag"), ["v2", "api", "id3", "tag"]);
        assert!(tokens(" --- ").is_empty());
    }

    #[test]
    fn bm25_matches_the_textbook_formula() {
        let entries = [
            entry(Kind::Tool, "echo", "echo the message back"),
            entry(Kind::Tool, "add", "add two numbers"),
            entry(Kind::Resource, "file:///x", ""),
        ];
        let ranked = index(&entries).rank("echo", 8);
        // Documents: echo echo echo the message back (6), add add add two numbers (5),
        // file x file x (4); avgdl = 5. "echo": n = 1, f = 3 in the first.
        let idf = (1.0f64 + (3.0 - 1.0 + 0.5) / 1.5).ln();
        let expected = idf * 3.0 * 2.2 / (3.0 + 1.2 * (0.25 + 0.75 * 6.0 / 5.0));
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].0, 0);
        assert!(
            (ranked[0].1 - expected).abs() < 1e-12,
            "{ranked:?} {expected}"
        );
    }

    #[test]
    fn exact_names_rank_first_and_ties_keep_catalog_order() {
        let entries = [
            entry(Kind::Tool, "get-sum", "sum sum sum of numbers"),
            entry(Kind::Tool, "sum", ""),
            entry(Kind::Prompt, "sum", ""),
        ];
        let index = index(&entries);
        let ranked = index.rank("SUM", 8);
        assert_eq!(
            ranked.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [1, 2, 0]
        );
        assert_eq!(index.rank("", 2), [(0, 0.0), (1, 0.0)]);
        assert!(index.rank("nothing", 8).is_empty());
    }

    #[test]
    fn hidden_entries_are_not_documents() {
        let entries = [
            entry(Kind::Tool, "secret_sum", "sum"),
            entry(Kind::Tool, "sum", "sum of numbers"),
            entry(Kind::Prompt, "total", "a sum"),
        ];
        let index = Index::new(&entries, |e| e.id != "secret_sum");
        assert_eq!(index.len(), 2);
        let visible = [&entries[1], &entries[2]];
        let expected: Vec<(usize, f64)> = reference(&visible, "sum", 8)
            .into_iter()
            .map(|(i, s)| (i + 1, s))
            .collect();
        assert_eq!(index.rank("sum", 8), expected);
        assert_eq!(index.rank("", 8), [(1, 0.0), (2, 0.0)]);
    }

    /// A small deterministic generator (xorshift), so the catalog is the same on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
            words[self.below(words.len())]
        }
    }

    #[test]
    fn the_index_ranks_as_the_reference_scorer_on_a_generated_catalog() {
        const WORDS: [&str; 24] = [
            "create",
            "invoice",
            "list",
            "pull",
            "request",
            "repo",
            "export",
            "metrics",
            "CSV",
            "schedule",
            "event",
            "refund",
            "payment",
            "search",
            "ticket",
            "label",
            "getUser",
            "HTMLParser",
            "ünïcode",
            "Straße",
            "v2",
            "data_set",
            "file",
            "sum",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut entries = Vec::new();
        for i in 0..600 {
            let kind = Kind::ALL[rng.below(4)];
            let name = format!(
                "{}_{}{}",
                rng.pick(&WORDS),
                rng.pick(&WORDS),
                if rng.below(3) == 0 {
                    format!("_{i}")
                } else {
                    String::new()
                }
            );
            let words = 1 + rng.below(12);
            let description: Vec<&str> = (0..words).map(|_| rng.pick(&WORDS)).collect();
            let mut e = entry(kind, &name, &description.join(" "));
            if rng.below(4) == 0 {
                e.title = Some(format!("{} {}", rng.pick(&WORDS), rng.pick(&WORDS)));
            }
            if kind == Kind::Prompt && rng.below(2) == 0 {
                e.arguments = Some(vec![Argument {
                    name: rng.pick(&WORDS).to_string(),
                    description: None,
                    required: rng.below(2) == 0,
                }]);
            }
            if rng.below(10) == 0 {
                // Another entry's name, in other case: several exact matches.
                e.name = entries
                    .get(rng.below(i.max(1)))
                    .map_or(name.to_uppercase(), |o: &Entry| o.name.to_uppercase());
            }
            entries.push(e);
        }
        let mut queries: Vec<String> = vec![
            String::new(),
            "   ".into(),
            "zzqx quorble".into(),
            "list list pull".into(),
            "STRASSE straße".into(),
        ];
        for _ in 0..150 {
            let words = 1 + rng.below(4);
            let q: Vec<&str> = (0..words).map(|_| rng.pick(&WORDS)).collect();
            queries.push(q.join(" "));
        }
        for _ in 0..50 {
            let e = &entries[rng.below(entries.len())];
            queries.push(format!(" {} ", e.name.to_lowercase()));
        }
        let index = index(&entries);
        let all: Vec<&Entry> = entries.iter().collect();
        for query in &queries {
            for top_k in [1, 8, 20] {
                assert_eq!(
                    index.rank(query, top_k),
                    reference(&all, query, top_k),
                    "query {query:?}, top_k {top_k}"
                );
            }
        }
    }
}
