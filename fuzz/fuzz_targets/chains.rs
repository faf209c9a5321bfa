//! The repetition marker of the `front_end` and `check` targets: `<<REPEAT N>>TEXT<<END>>`
//! stands for TEXT written N times (the closing marker may be left out: TEXT then runs to the
//! end). Long flat chains (`1 + 1 + …`, `++` runs, `else if` arms, prefix operators, field and
//! call suffixes) nest as deep as they are long, so they test whether every stage walks and drops
//! trees without exhausting the stack; libFuzzer's inputs are a few kilobytes, far too short to
//! spell one out.

use std::borrow::Cow;

const REPEAT_OPEN: &[u8] = b"<<REPEAT ";
const REPEAT_CLOSE: &[u8] = b"<<END>>";

/// The most repetitions one marker gives: deep enough that a recursive walk or drop of the chain
/// would overflow the fuzzer's 8 MiB main stack, small enough to stay under its memory limit.
const MAX_REPEAT: usize = 50_000;

/// The most bytes the markers of one input expand to.
const MAX_EXPANDED: usize = 1 << 20;

/// The input with every repetition marker expanded.
pub fn expand(data: &[u8]) -> Cow<'_, [u8]> {
    if find(data, REPEAT_OPEN).is_none() {
        return Cow::Borrowed(data);
    }
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(at) = find(rest, REPEAT_OPEN) {
        out.extend_from_slice(&rest[..at]);
        let after = &rest[at + REPEAT_OPEN.len()..];
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || !after[digits..].starts_with(b">>") {
            // Not a marker after all: keep its text and look further on.
            out.extend_from_slice(REPEAT_OPEN);
            rest = after;
            continue;
        }
        let count = after[..digits].iter().fold(0usize, |n, d| {
            n.saturating_mul(10).saturating_add(usize::from(d - b'0'))
        });
        let body = &after[digits + 2..];
        let (body, next) = match find(body, REPEAT_CLOSE) {
            Some(end) => (&body[..end], &body[end + REPEAT_CLOSE.len()..]),
            None => (body, &[][..]),
        };
        let room = MAX_EXPANDED.saturating_sub(out.len()) / body.len().max(1);
        for _ in 0..count.min(MAX_REPEAT).min(room) {
            out.extend_from_slice(body);
        }
        rest = next;
    }
    out.extend_from_slice(rest);
    Cow::Owned(out)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
