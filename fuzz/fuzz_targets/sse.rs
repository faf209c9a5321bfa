//! Fuzz target for the server-sent events parser of the LLM client (`chat/src/llm/sse.rs`),
//! which reads every streamed reply of an OpenAI-compatible endpoint: bytes a server controls.
//!
//! The parser's file is compiled into this target on its own (it uses nothing but `std`), so
//! the target does not build the chat engine's HTTP stack. An input is a chunk size (its first
//! byte, 1 to 256), an event bound (its second byte, times 16, plus 1) and the stream's bytes.
//!
//! Beyond "no panic", these invariants are checked:
//! - fed in chunks of that size, the stream gives the same events as fed whole (a line end
//!   split between chunks, `\r\n` included, changes nothing);
//! - under the small bound, no event's data is longer than the bound, and the events given
//!   before the parser fails are the first events of the unbounded parse;
//! - the data of every event is the stream's text, so an input without `data` has no events.
//!
//! The parser's cost is linear in its input; libFuzzer's `-timeout` reports an input that is not.

#![no_main]

#[path = "../../chat/src/llm/sse.rs"]
mod sse;

use libfuzzer_sys::fuzz_target;

const UNBOUNDED: usize = usize::MAX;

/// The events of `bytes` fed in chunks of `size`, and whether the bound stopped the parse.
fn parse(bytes: &[u8], size: usize, bound: usize) -> (Vec<sse::Event>, bool) {
    let mut parser = sse::Parser::new(bound);
    let mut events = Vec::new();
    for chunk in bytes.chunks(size) {
        if parser.feed(chunk, &mut events).is_err() {
            return (events, true);
        }
    }
    (events, false)
}

fuzz_target!(|input: &[u8]| {
    let [size, bound, stream @ ..] = input else {
        return;
    };
    let size = usize::from(*size) + 1;
    let bound = usize::from(*bound) * 16 + 1;
    let (whole, failed) = parse(stream, stream.len().max(1), UNBOUNDED);
    assert!(!failed, "no bound, no failure");
    let (chunked, _) = parse(stream, size, UNBOUNDED);
    assert_eq!(whole, chunked, "chunks of {size} bytes");
    let (bounded, stopped) = parse(stream, size, bound);
    for event in &bounded {
        assert!(event.data.len() <= bound, "{event:?} within {bound}");
    }
    if stopped {
        assert_eq!(
            bounded[..],
            whole[..bounded.len()],
            "a prefix of the unbounded events"
        );
    } else {
        assert_eq!(bounded, whole);
    }
    if !stream.windows(4).any(|w| w == b"data") {
        assert!(whole.is_empty(), "{whole:?}");
    }
});
