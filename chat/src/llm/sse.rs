//! A server-sent events parser (the WHATWG HTML standard, "Interpreting an event stream") whose
//! work is linear in its input, with a bound on what one event may hold.
//!
//! It replaces `eventsource-stream`, which re-parsed its whole buffer from the start for every
//! chunk received and copied the rest of the buffer after every line: an event of n bytes that
//! arrives in chunks of k bytes cost about n²/k steps, so a 20 MB token took about a minute of
//! CPU before any size check could see it. Here every byte is looked at once when it arrives (to
//! find line ends) and once more when its line is complete, and the bytes an event holds are
//! counted as they arrive, so an oversized event fails before its line is even complete.
//!
//! The parser is plain, synchronous and free of IO, so the fuzz target `sse` compiles this file
//! on its own.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, `message` when the event named none.
    pub event: String,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

/// The event being received held more than the parser's bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge;

/// An incremental parser: feed it the body's bytes as they arrive.
#[derive(Debug)]
pub struct Parser {
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The data buffer of the event being received (each data line followed by `\n`).
    data: String,
    /// The event type buffer.
    event: String,
    /// The last chunk ended with `\r`: a `\n` starting the next one ends no second line.
    after_cr: bool,
    /// No line has been completed yet (a byte order mark may start the stream).
    first_line: bool,
    /// The most bytes one event may hold: its unfinished line, its data and its type.
    max_event_bytes: usize,
    /// Set once the bound was passed: the stream cannot be read any further.
    failed: bool,
}

impl Parser {
    /// A parser that fails once one event holds more than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Parser {
        Parser {
            line: Vec::new(),
            data: String::new(),
            event: String::new(),
            after_cr: false,
            first_line: true,
            max_event_bytes,
            failed: false,
        }
    }

    /// Parses the next bytes of the stream, appending every event they complete to `out`. After
    /// an error the parser stays failed.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Event>) -> Result<(), TooLarge> {
        if self.failed {
            return Err(TooLarge);
        }
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            if self.line.is_empty() {
                self.line_ended(&bytes[..end], out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&bytes[..end]);
                let result = self.line_ended(&line, out);
                // The buffer's allocation is kept for the next long line.
                line.clear();
                self.line = line;
                result?;
            }
            let ending = bytes[end];
            bytes = &bytes[end + 1..];
            if ending == b'\r' {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.line.extend_from_slice(bytes);
        self.check()
    }

    /// Fails once the event being received holds more than the bound.
    fn check(&mut self) -> Result<(), TooLarge> {
        let held = self.line.len() + self.data.len() + self.event.len();
        if held > self.max_event_bytes {
            self.failed = true;
            self.line = Vec::new();
            self.data = String::new();
            return Err(TooLarge);
        }
        Ok(())
    }

    /// One complete line, without its line end.
    fn line_ended(&mut self, line: &[u8], out: &mut Vec<Event>) -> Result<(), TooLarge> {
        let mut line = line;
        if self.first_line {
            self.first_line = false;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                // Invalid UTF-8 becomes U+FFFD, as the standard's decoding does.
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            // `id`, `retry` and unknown fields matter only to a reconnecting client.
            _ => {}
        }
        self.check()
    }

    /// A blank line: the event received so far is dispatched when it has data.
    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let mut data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event);
        if data.is_empty() {
            return;
        }
        data.pop();
        out.push(Event {
            event: if event.is_empty() {
                "message".to_string()
            } else {
                event
            },
            data,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in(pieces: &[&[u8]]) -> Vec<Event> {
        let mut parser = Parser::new(1 << 20);
        let mut out = Vec::new();
        for piece in pieces {
            parser.feed(piece, &mut out).expect("within the bound");
        }
        out
    }

    fn data(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn the_standards_examples_parse() {
        let text = b"data: This is the first message.\n\ndata: This is the second message, it\ndata: has two lines.\n\ndata: This is the third message.\n\n";
        assert_eq!(
            data(&parse_in(&[text])),
            [
                "This is the first message.",
                "This is the second message, it\nhas two lines.",
                "This is the third message."
            ]
        );
        let typed = parse_in(&[b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n"]);
        assert_eq!(typed[0].event, "add");
        assert_eq!(typed[1].event, "remove");
        assert_eq!(typed[1].data, "2153");
        let fields = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n";
        assert_eq!(
            data(&parse_in(&[fields])),
            ["first event", "second event", " third event"]
        );
        // A bare `data` line is an empty data line; an event without data is not dispatched;
        // an unfinished event at the end of the stream is dropped.
        assert_eq!(
            data(&parse_in(&[b"data\n\ndata\ndata\n\ndata:\n"])),
            ["", "\n"]
        );
        assert_eq!(data(&parse_in(&[b"event: x\n\n"])), Vec::<&str>::new());
    }

    #[test]
    fn every_split_and_line_end_gives_the_same_events() {
        let text = "\u{feff}: hi\r\ndata: {\"a\": \"é\"}\r\n\r\ndata: two\rdata: lines\r\rdata: [DONE]\n\n";
        let whole = parse_in(&[text.as_bytes()]);
        assert_eq!(data(&whole), ["{\"a\": \"é\"}", "two\nlines", "[DONE]"]);
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(
                parse_in(&[&bytes[..cut], &bytes[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(parse_in(&singles), whole);
    }

    #[test]
    fn an_event_past_the_bound_fails_before_its_line_ends() {
        let mut parser = Parser::new(100);
        let mut out = Vec::new();
        assert_eq!(parser.feed(b"data: ", &mut out), Ok(()));
        assert_eq!(parser.feed(&[b'x'; 90], &mut out), Ok(()));
        assert_eq!(parser.feed(&[b'x'; 10], &mut out), Err(TooLarge));
        assert_eq!(parser.feed(b"\n\n", &mut out), Err(TooLarge));
        assert!(out.is_empty());
        // Data lines add up within one event; a new event starts from nothing.
        let mut parser = Parser::new(100);
        assert_eq!(
            parser.feed(&[b"data: ", &[b'y'; 60][..], b"\n\n"].concat(), &mut out),
            Ok(())
        );
        assert_eq!(
            parser.feed(&[b"data: ", &[b'y'; 60][..], b"\n"].concat(), &mut out),
            Ok(())
        );
        assert_eq!(
            parser.feed(&[b"data: ", &[b'y'; 60][..], b"\n"].concat(), &mut out),
            Err(TooLarge)
        );
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn random_streams_parse_alike_in_any_chunks_and_within_a_bound() {
        // The invariants of the fuzz target `sse`, over streams built from the pieces that
        // matter to the parser, with a fixed xorshift sequence so a failure repeats.
        let pieces: [&[u8]; 11] = [
            b"data",
            b"event",
            b": ",
            b":",
            b"\r",
            b"\n",
            b"\r\n",
            b"xyz",
            b"\xEF\xBB\xBF",
            b"\xff",
            b"[DONE]",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2000 {
            let mut stream = Vec::new();
            for _ in 0..(next() % 40) {
                stream.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let whole = {
                let mut parser = Parser::new(usize::MAX);
                let mut out = Vec::new();
                parser.feed(&stream, &mut out).expect("no bound");
                out
            };
            let size = (next() % 7 + 1) as usize;
            let bound = (next() % 12) as usize;
            let mut parser = Parser::new(bound);
            let mut chunked = Parser::new(usize::MAX);
            let (mut bounded, mut all) = (Vec::new(), Vec::new());
            let mut stopped = false;
            for chunk in stream.chunks(size) {
                chunked.feed(chunk, &mut all).expect("no bound");
                stopped = stopped || parser.feed(chunk, &mut bounded).is_err();
            }
            assert_eq!(all, whole, "{stream:?} in chunks of {size}");
            assert!(bounded.iter().all(|e| e.data.len() <= bound));
            if stopped {
                assert_eq!(bounded[..], whole[..bounded.len()]);
            } else {
                assert_eq!(bounded, whole, "{stream:?} within {bound}");
            }
        }
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(data(&parse_in(&[b"data: a\xffb\n\n"])), ["a\u{fffd}b"]);
    }
}
