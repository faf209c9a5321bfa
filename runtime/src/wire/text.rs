//! A strict JSON text reader (RFC 8259) with the rules of `prelude.md` §8.2: exactly one value
//! with JSON whitespace around it, a repeated key keeps its first position and its last value,
//! `\u` escapes are UTF-16 (a lone surrogate is malformed), a number too large for binary64 is an
//! error and one too small rounds to zero.
//!
//! Numbers are converted with the standard library's correctly rounded `str::parse::<f64>`, so
//! `0.30000000000000004` reads back as the same binary64 value that printed it.

use serde_json::{Map, Number, Value};

/// How deeply arrays and objects may nest. Reading, converting and dropping a document are all
/// recursive, so a bound keeps hostile input from exhausting the stack.
const MAX_DEPTH: u32 = 512;

/// Parses JSON text into a `serde_json` document. The error is the detail that follows
/// `malformed JSON — ` in the callers' messages, such as `unexpected character 'x' at line 1,
/// column 5`.
pub fn parse_text(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        text,
        s: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    p.ws();
    if p.pos == p.s.len() {
        return Err("the text holds no value".to_string());
    }
    let value = p.value()?;
    p.ws();
    if p.pos < p.s.len() {
        return Err(p.unexpected("after the value"));
    }
    Ok(value)
}

/// The value of `text` if it matches JSON's number grammar exactly
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) and is finite (`string.to_number`).
pub fn parse_number(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let end = scan_number(bytes, 0)?;
    if end != bytes.len() {
        return None;
    }
    let x: f64 = text.parse().ok()?;
    x.is_finite().then_some(x)
}

/// The end of the number that starts at `start`, if the grammar matches there.
fn scan_number(s: &[u8], start: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let from = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut i = start;
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i)?,
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

struct Parser<'t> {
    text: &'t str,
    s: &'t [u8],
    pos: usize,
    depth: u32,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// `line L, column C` of a byte offset (columns count code points, from 1).
    fn location(&self, at: usize) -> String {
        let before = self.text.get(..at).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("line {line}, column {column}")
    }

    fn unexpected(&self, context: &str) -> String {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            None => format!("unexpected end of input {context}"),
            Some(c) => format!(
                "unexpected character {} {context} at {}",
                quote_char(c),
                self.location(self.pos)
            ),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.s.get(self.pos) {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.unexpected("where a value was expected")),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Value, String>) -> Result<Value, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!(
                "arrays and objects nest deeper than {MAX_DEPTH} levels at {}",
                self.location(self.pos)
            ));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("where a value was expected"))
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        let Some(end) = scan_number(self.s, start) else {
            // Point at the first character that breaks the grammar.
            let mut i = start + 1;
            while self
                .s
                .get(i)
                .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+'))
            {
                i += 1;
            }
            self.pos = i.min(self.s.len());
            return Err(self.unexpected("in a number"));
        };
        let literal = &self.text[start..end];
        let x: f64 = literal
            .parse()
            .map_err(|_| format!("invalid number at {}", self.location(start)))?;
        if !x.is_finite() {
            return Err(format!(
                "the number at {} is too large for binary64",
                self.location(start)
            ));
        }
        self.pos = end;
        Ok(Value::Number(number(x)))
    }

    fn array(&mut self) -> Result<Value, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            match self.s.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.unexpected("in an array")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, String> {
        self.pos += 1;
        let mut map = Map::new();
        self.ws();
        if self.s.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.ws();
            if self.s.get(self.pos) != Some(&b'"') {
                return Err(self.unexpected("where an object key was expected"));
            }
            let key = self.string()?;
            self.ws();
            if self.s.get(self.pos) != Some(&b':') {
                return Err(self.unexpected("after an object key"));
            }
            self.pos += 1;
            self.ws();
            let value = self.value()?;
            // With `preserve_order`, inserting an existing key keeps its position and replaces
            // its value: the first position and the last value.
            map.insert(key, value);
            self.ws();
            match self.s.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.unexpected("in an object")),
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run = self.pos;
            while self
                .s
                .get(self.pos)
                .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
            {
                self.pos += 1;
            }
            // The run ends at an ASCII byte, so it is a whole sequence of characters.
            out.push_str(&self.text[run..self.pos]);
            match self.s.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(_) => {
                    return Err(format!(
                        "unescaped control character in a string at {}",
                        self.location(self.pos)
                    ));
                }
                None => {
                    return Err(format!(
                        "unterminated string starting at {}",
                        self.location(open)
                    ));
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, String> {
        let at = self.pos;
        self.pos += 1;
        let Some(&c) = self.s.get(self.pos) else {
            return Err("unexpected end of input in a string".to_string());
        };
        self.pos += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(at)?;
                match unit {
                    0xD800..=0xDBFF => {
                        let low = if self.s[self.pos..].starts_with(b"\\u") {
                            self.pos += 2;
                            self.hex4(at)?
                        } else {
                            0
                        };
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(lone_surrogate(self, at));
                        }
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or_else(|| lone_surrogate(self, at))?
                    }
                    0xDC00..=0xDFFF => return Err(lone_surrogate(self, at)),
                    _ => char::from_u32(unit).ok_or_else(|| lone_surrogate(self, at))?,
                }
            }
            _ => {
                self.pos = at;
                return Err(format!("invalid escape at {}", self.location(at)));
            }
        })
    }

    fn hex4(&mut self, at: usize) -> Result<u32, String> {
        let digits = self.s.get(self.pos..self.pos + 4);
        let value = digits
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok());
        match value {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(format!("invalid \\u escape at {}", self.location(at))),
        }
    }
}

fn lone_surrogate(p: &Parser<'_>, at: usize) -> String {
    format!("lone surrogate in a \\u escape at {}", p.location(at))
}

/// A finite binary64 value as a `serde_json` number: integral values that fit become integers.
pub(super) fn number(x: f64) -> Number {
    if x.fract() == 0.0 && x.abs() < 9.0e18 {
        Number::from(x as i64)
    } else {
        Number::from_f64(x).unwrap_or_else(|| Number::from(0))
    }
}

fn quote_char(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("'{c}'")
    }
}
