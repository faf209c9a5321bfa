//! `mcp_search_S` (`host.md` §10.4): BM25 over the catalog, and the result objects.
//!
//! Each entry is one document: the tokens of its id, name, title, description and (for
//! prompts) argument names, together. A query's distinct tokens are its terms; the inverse
//! document frequency is the non-negative form `ln(1 + (N − n + 0.5) / (n + 0.5))`.

use serde_json::{Map, Value, json};

use super::catalog::{Catalog, Entry, Kind};

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lower-case tokens of `text`: split on every character that is not alphanumeric, and inside
/// words at camelCase boundaries (`getPullRequest` → get, pull, request; `HTMLParser` → html,
/// parser). snake_case splits at its underscores.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase()
                || prev.is_uppercase() && cur.is_uppercase() && next_lower;
            if boundary {
                out.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            out.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    out
}

/// The tokens of one entry's searchable fields.
fn document(entry: &Entry) -> Vec<String> {
    let mut text = vec![entry.id.as_str(), entry.name.as_str()];
    text.extend(entry.title.as_deref());
    text.extend(entry.description.as_deref());
    for a in entry.arguments.iter().flatten() {
        text.push(&a.name);
    }
    text.into_iter().flat_map(tokens).collect()
}

/// The BM25 score of every entry for `query`'s terms, in entry order.
pub fn scores(entries: &[&Entry], query: &[String]) -> Vec<f64> {
    let docs: Vec<Vec<String>> = entries.iter().map(|e| document(e)).collect();
    let n = docs.len() as f64;
    if docs.is_empty() {
        return Vec::new();
    }
    let avgdl = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut terms: Vec<&String> = Vec::new();
    for t in query {
        if !terms.contains(&t) {
            terms.push(t);
        }
    }
    let idf: Vec<f64> = terms
        .iter()
        .map(|t| {
            let containing = docs.iter().filter(|d| d.contains(t)).count() as f64;
            (1.0 + (n - containing + 0.5) / (containing + 0.5)).ln()
        })
        .collect();
    docs.iter()
        .map(|doc| {
            let len = doc.len() as f64;
            terms
                .iter()
                .zip(&idf)
                .map(|(t, idf)| {
                    let f = doc.iter().filter(|w| w == t).count() as f64;
                    if f == 0.0 || avgdl == 0.0 {
                        0.0
                    } else {
                        idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avgdl))
                    }
                })
                .sum()
        })
        .collect()
}

/// The ranked entries for `query`: indices into `entries` with their scores, at most `top_k`.
/// An empty query (no tokens) gives the first `top_k` in catalog order with score 0.
pub fn rank(entries: &[&Entry], query: &str, top_k: usize) -> Vec<(usize, f64)> {
    let terms = tokens(query);
    if terms.is_empty() {
        return (0..entries.len().min(top_k)).map(|i| (i, 0.0)).collect();
    }
    let scores = scores(entries, &terms);
    let wanted = query.trim();
    let exact = |e: &Entry| {
        e.id.eq_ignore_ascii_case(wanted)
            || e.name.eq_ignore_ascii_case(wanted)
            || e.id.to_lowercase() == wanted.to_lowercase()
            || e.name.to_lowercase() == wanted.to_lowercase()
    };
    let mut ranked: Vec<(usize, f64, bool)> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| (i, s, exact(entries[i])))
        .filter(|&(_, s, exact)| exact || s > 0.0)
        .collect();
    // Exact matches first, then by score; the sort is stable, so ties keep catalog order.
    ranked.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.total_cmp(&a.1)));
    ranked.truncate(top_k);
    ranked.into_iter().map(|(i, s, _)| (i, s)).collect()
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

/// The whole search result over the `visible` entries of `catalog`.
pub fn response(
    server: &str,
    query: &str,
    top_k: usize,
    catalog: &Catalog,
    visible: &[&Entry],
) -> Value {
    let results: Vec<Value> = rank(visible, query, top_k)
        .into_iter()
        .map(|(i, score)| result(visible[i], score))
        .collect();
    let mut o = Map::new();
    o.insert("server".into(), json!(server));
    o.insert("query".into(), json!(query));
    o.insert("total_items".into(), json!(visible.len()));
    o.insert("results".into(), Value::Array(results));
    if !catalog.unavailable.is_empty() {
        o.insert("unavailable".into(), super::catalog::unavailable(catalog));
    }
    Value::Object(o)
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn tokens_split_case_and_punctuation() {
        assert_eq!(tokens("getPullRequest"), ["get", "pull", "request"]);
        assert_eq!(tokens("HTMLParser v2"), ["html", "parser", "v2"]);
        assert_eq!(
            tokens("list_issues/by-repo"),
            ["list", "issues", "by", "repo"]
        );
        assert_eq!(tokens("Ünïcode Wörds"), ["ünïcode", "wörds"]);
        assert!(tokens(" --- ").is_empty());
    }

    #[test]
    fn bm25_matches_the_textbook_formula() {
        let a = entry(Kind::Tool, "echo", "echo the message back");
        let b = entry(Kind::Tool, "add", "add two numbers");
        let c = entry(Kind::Resource, "file:///x", "");
        let entries = [&a, &b, &c];
        let s = scores(&entries, &tokens("echo"));
        // Documents: a = echo echo echo the message back (6), b = add add add two numbers (5),
        // c = file x file x (4); avgdl = 5. "echo": n = 1, f = 3 in a.
        let idf = (1.0f64 + (3.0 - 1.0 + 0.5) / 1.5).ln();
        let expected = idf * 3.0 * 2.2 / (3.0 + 1.2 * (0.25 + 0.75 * 6.0 / 5.0));
        assert!((s[0] - expected).abs() < 1e-12, "{} {expected}", s[0]);
        assert_eq!(&s[1..], &[0.0, 0.0]);
    }

    #[test]
    fn exact_names_rank_first_and_ties_keep_catalog_order() {
        let a = entry(Kind::Tool, "get-sum", "sum sum sum of numbers");
        let b = entry(Kind::Tool, "sum", "");
        let c = entry(Kind::Prompt, "sum", "");
        let entries = [&a, &b, &c];
        let ranked = rank(&entries, "SUM", 8);
        assert_eq!(
            ranked.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [1, 2, 0]
        );
        assert_eq!(rank(&entries, "", 2), [(0, 0.0), (1, 0.0)]);
        assert!(rank(&entries, "nothing", 8).is_empty());
    }
}
