//! Runtime values (`language.md` §8): kinds, the private flag, structural equality, number
//! formatting (§11.2) and the wire form (§11.1).

use std::fmt::Write as _;
use std::sync::Arc;

use indexmap::IndexMap;
pub use katari_lang::number::format_number;

use crate::callable::Callable;

/// A value and its private flag (§8.6).
#[derive(Clone, Debug)]
pub struct Value {
    pub v: V,
    flag: Flag,
}

/// The private flag, a whole word wide. As a `bool` it left seven padding bytes in every value,
/// which the compiler copied piecewise on each move; the wide loads that read the value back
/// then stalled (store forwarding fails), and that was a large share of a call's cost.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u64)]
enum Flag {
    Public = 0,
    Private = 1,
}

/// The kinds of values.
#[derive(Clone, Debug)]
#[repr(u64)]
pub enum V {
    Null,
    Bool(Truth),
    /// An integral binary64 value of the integer kind.
    Int(f64),
    /// A binary64 value of the number kind.
    Num(f64),
    Str(Str),
    Array(Arc<Vec<Value>>),
    Record(Arc<Record>),
    Data(Arc<DataValue>),
    Callable(Arc<Callable>),
    /// A blob id (`sha256-…`).
    File(Str),
}

/// A boolean a whole word wide, for the reason the private flag is: a one-byte payload left seven
/// padding bytes in the value's second word, copied piecewise on every move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u64)]
pub enum Truth {
    False = 0,
    True = 1,
}

impl Truth {
    #[inline(always)]
    pub fn get(self) -> bool {
        self == Truth::True
    }
}

impl From<bool> for Truth {
    #[inline(always)]
    fn from(b: bool) -> Truth {
        if b { Truth::True } else { Truth::False }
    }
}

/// The text of a string or file value: one thin pointer to a counted, immutable string.
pub type Str = arcstr::ArcStr;

/// A plain record: string keys in insertion order. Hashed with foldhash rather than std's
/// SipHash: field access hashes a short key on every look-up, and SipHash cost about 190
/// instructions per hash. The seed is random per process, so keys from untrusted JSON cannot be
/// chosen to collide. Build one with `Record::default()` or [`record_with_capacity`].
pub type Record = IndexMap<Arc<str>, Value, foldhash::fast::RandomState>;

/// An empty record with room for `n` keys.
pub fn record_with_capacity(n: usize) -> Record {
    Record::with_capacity_and_hasher(n, Default::default())
}

/// A data value: its constructor and its fields in declaration order.
#[derive(Clone, Debug)]
pub struct DataValue {
    pub ctor: Arc<Ctor>,
    pub fields: Vec<Value>,
}

/// What the runtime knows about a data constructor.
#[derive(Debug)]
pub struct Ctor {
    /// The qualified name (`shapes.circle`), the wire `$constructor`.
    pub name: Arc<str>,
    pub fields: Vec<Arc<str>>,
    /// The default of each field, where declared.
    pub defaults: Vec<Option<Value>>,
}

impl Value {
    pub const NULL: Value = Value {
        v: V::Null,
        flag: Flag::Public,
    };

    #[inline(always)]
    pub fn new(v: V) -> Value {
        Value {
            v,
            flag: Flag::Public,
        }
    }

    /// A value with the given private flag.
    #[inline(always)]
    pub fn with(v: V, private: bool) -> Value {
        Value {
            v,
            flag: if private { Flag::Private } else { Flag::Public },
        }
    }

    /// Whether the value is private (§8.6).
    #[inline(always)]
    pub fn private(&self) -> bool {
        self.flag == Flag::Private
    }

    /// Marks the value private, or public.
    #[inline(always)]
    pub fn set_private(&mut self, private: bool) {
        self.flag = if private { Flag::Private } else { Flag::Public };
    }
    pub fn bool(b: bool) -> Value {
        Value::new(V::Bool(b.into()))
    }
    pub fn int(n: f64) -> Value {
        Value::new(V::Int(n))
    }
    pub fn num(n: f64) -> Value {
        Value::new(V::Num(n))
    }
    pub fn str(s: impl Into<Str>) -> Value {
        Value::new(V::Str(s.into()))
    }
    pub fn array(items: Vec<Value>) -> Value {
        Value::new(V::Array(Arc::new(items)))
    }
    pub fn record(r: Record) -> Value {
        Value::new(V::Record(Arc::new(r)))
    }
    pub fn callable(c: Callable) -> Value {
        Value::new(V::Callable(Arc::new(c)))
    }

    /// An arithmetic result: integer-kind when both operands were integers and it is integral.
    pub fn arith(both_int: bool, n: f64) -> Value {
        if both_int && n.is_finite() && n.fract() == 0.0 {
            Value::int(n)
        } else {
            Value::num(n)
        }
    }

    #[inline(always)]
    pub fn with_private(mut self, private: bool) -> Value {
        if private {
            self.flag = Flag::Private;
        }
        self
    }

    /// Whether the value holds no allocation (null, booleans, integers, numbers).
    #[inline(always)]
    pub fn is_scalar(&self) -> bool {
        matches!(self.v, V::Null | V::Bool(_) | V::Int(_) | V::Num(_))
    }

    pub fn is_null(&self) -> bool {
        matches!(self.v, V::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.v {
            V::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<f64> {
        match self.v {
            V::Int(n) | V::Num(n) => Some(n),
            _ => None,
        }
    }

    /// Whether any part of the value is private (ignoring values captured in callables).
    pub fn any_private(&self) -> bool {
        self.private()
            || match &self.v {
                V::Array(items) => items.iter().any(Value::any_private_nested),
                V::Record(r) => r.values().any(Value::any_private_nested),
                V::Data(d) => d.fields.iter().any(Value::any_private_nested),
                _ => false,
            }
    }

    /// [`Value::any_private`] of a part: containers on a grown stack when nesting is deep,
    /// anything else by its flag alone (the stack check would cost more than the answer).
    fn any_private_nested(&self) -> bool {
        match &self.v {
            V::Array(_) | V::Record(_) | V::Data(_) => {
                stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.any_private())
            }
            _ => self.private(),
        }
    }

    /// How §11.4 describes the value's kind in messages.
    pub fn describe(&self) -> String {
        match &self.v {
            V::Null => "a value of type null".into(),
            V::Bool(_) => "a value of type boolean".into(),
            V::Int(_) => "a value of type integer".into(),
            V::Num(_) => "a value of type number".into(),
            V::Str(_) => "a value of type string".into(),
            V::Array(_) => "a value of type array".into(),
            V::Record(_) => "a record".into(),
            V::Data(d) => format!("a \"{}\" value", d.ctor.name),
            V::Callable(_) => "a callable value".into(),
            V::File(_) => "a file handle".into(),
        }
    }
}

/// Structural, kind-exact equality (§8.3).
pub fn equal(a: &Value, b: &Value) -> bool {
    match (&a.v, &b.v) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Int(x), V::Int(y)) | (V::Num(x), V::Num(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        (V::Array(x), V::Array(y)) => {
            Arc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q)))
        }
        (V::Record(x), V::Record(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (V::Data(x), V::Data(y)) => {
            (Arc::ptr_eq(&x.ctor, &y.ctor) || x.ctor.name == y.ctor.name)
                && x.fields.iter().zip(&y.fields).all(|(p, q)| equal(p, q))
        }
        (V::File(x), V::File(y)) => x == y,
        (V::Callable(x), V::Callable(y)) => Arc::ptr_eq(x, y) || x.same_declaration(y),
        _ => false,
    }
}

// -------------------------------------------------------------------------------------------
// Numbers and strings as text (§11.2)
// -------------------------------------------------------------------------------------------

/// Up to 2^53 an integral binary64 value's exact digits are also its shortest round-tripping
/// ones, which is what JavaScript prints; above, the shortest digits can be fewer
/// (`594822945594790912` prints as `594822945594790900`).
const EXACT_DIGITS: f64 = 9_007_199_254_740_992.0;

/// The digits of an integral value up to 2^53 in magnitude, written into `buf`; `None` for
/// other values, which take the general path of [`format_number`]. Below 2^53 an integral
/// binary64 value has exactly the digits of the `i64` it converts to (a negative zero converts
/// to 0, which JavaScript writes as `0` too).
fn integer_digits(x: f64, buf: &mut itoa::Buffer) -> Option<&str> {
    if x.fract() != 0.0 || x.abs() > EXACT_DIGITS {
        return None;
    }
    Some(buf.format(x as i64))
}

/// [`format_number`] as shared text. Integral values up to 2^53 are written into a stack buffer
/// and copied once into the string, sparing the intermediate `String` (`string.to_string` of an
/// integer is common in string building).
pub fn number_text(x: f64) -> Str {
    let mut buf = itoa::Buffer::new();
    match integer_digits(x, &mut buf) {
        Some(digits) => Str::from(digits),
        None => Str::from(format_number(x)),
    }
}

/// Appends [`format_number`]'s text to `out` (templates write numbers in place).
pub fn push_number(out: &mut String, x: f64) {
    let mut buf = itoa::Buffer::new();
    match integer_digits(x, &mut buf) {
        Some(digits) => out.push_str(digits),
        None => out.push_str(&format_number(x)),
    }
}

/// Appends a JSON string literal escaped like `JSON.stringify`.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The failure of encoding a value as JSON: a non-finite number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonFinite;

/// How encoding treats private values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    /// Write private values as they are (`json.to_text` inside the program).
    Reveal,
    /// Replace every private node with `{"$redacted":true}` (user-facing boundaries).
    Redact,
}

/// Writes the wire JSON of a value (§11.1), compact. Values nested deeper than the thread's
/// stack allows are written on stack segments grown as needed.
pub fn write_wire(out: &mut String, value: &Value, privacy: Privacy) -> Result<(), NonFinite> {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        write_wire_unguarded(out, value, privacy)
    })
}

fn write_wire_unguarded(
    out: &mut String,
    value: &Value,
    privacy: Privacy,
) -> Result<(), NonFinite> {
    if value.private() && privacy == Privacy::Redact {
        out.push_str("{\"$redacted\":true}");
        return Ok(());
    }
    match &value.v {
        V::Null => out.push_str("null"),
        V::Bool(b) => out.push_str(if b.get() { "true" } else { "false" }),
        V::Int(n) | V::Num(n) => {
            if !n.is_finite() {
                return Err(NonFinite);
            }
            out.push_str(&format_number(*n));
        }
        V::Str(s) => write_json_string(out, s),
        V::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_wire(out, item, privacy)?;
            }
            out.push(']');
        }
        V::Record(r) => write_fields(out, r.iter().map(|(k, v)| (&**k, v)), privacy)?,
        V::Data(d) => {
            out.push_str("{\"$constructor\":");
            write_json_string(out, &d.ctor.name);
            out.push_str(",\"value\":");
            write_fields(
                out,
                d.ctor.fields.iter().map(|k| &**k).zip(&d.fields),
                privacy,
            )?;
            out.push('}');
        }
        V::File(id) => {
            out.push_str("{\"$ref\":");
            write_json_string(out, id);
            out.push_str(",\"semanticKind\":\"file\"}");
        }
        V::Callable(c) => c.write_wire(out, privacy)?,
    }
    Ok(())
}

fn write_fields<'a>(
    out: &mut String,
    fields: impl Iterator<Item = (&'a str, &'a Value)>,
    privacy: Privacy,
) -> Result<(), NonFinite> {
    out.push('{');
    for (i, (k, v)) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        if k.starts_with('$') {
            let mut escaped = String::with_capacity(k.len() + 1);
            escaped.push('$');
            escaped.push_str(k);
            write_json_string(out, &escaped);
        } else {
            write_json_string(out, k);
        }
        out.push(':');
        write_wire(out, v, privacy)?;
    }
    out.push('}');
    Ok(())
}

/// The wire JSON text of a value.
pub fn to_wire(value: &Value, privacy: Privacy) -> Result<String, NonFinite> {
    let mut out = String::new();
    write_wire(&mut out, value, privacy)?;
    Ok(out)
}

// A value is three words, and so is the result of an evaluation (its error uses the flag's niche).
const _: () = assert!(std::mem::size_of::<Value>() == 24);
const _: () = assert!(std::mem::size_of::<Result<Value, Box<crate::control::Control>>>() == 24);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_javascript() {
        let cases = [
            (6.0, "6"),
            (3.5, "3.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (-0.0, "0"),
            (0.0, "0"),
            (1.5e300, "1.5e+300"),
            (100.0, "100"),
            (-2.5, "-2.5"),
            (3.469446951953614e-18, "3.469446951953614e-18"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        let cases = cases.into_iter().chain([
            (9_007_199_254_740_992.0, "9007199254740992"),
            (594_822_945_594_790_912.0, "594822945594790900"),
            (-67_706_788_023_824_168.0, "-67706788023824170"),
            (1e18, "1000000000000000000"),
        ]);
        for (x, text) in cases {
            assert_eq!(format_number(x), text, "{x}");
            assert_eq!(&*number_text(x), text, "{x}");
            let mut pushed = String::from("<");
            push_number(&mut pushed, x);
            assert_eq!(pushed, format!("<{text}"), "{x}");
        }
        for x in [
            1.0,
            -1.0,
            9.0,
            10.0,
            -42.0,
            999_999_999_999_999_999.0,
            1e18,
            -1e18,
            2e18,
        ] {
            assert_eq!(&*number_text(x), format_number(x), "{x}");
        }
    }

    #[test]
    fn json_strings_escape_like_javascript() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\n\u{1}/é");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001/é\"");
    }

    #[test]
    fn records_escape_dollar_keys_and_redact() {
        let mut r = Record::default();
        r.insert("$kind".into(), Value::str("raw"));
        r.insert("token".into(), Value::str("s3cret").with_private(true));
        let v = Value::record(r);
        assert_eq!(
            to_wire(&v, Privacy::Redact).ok().as_deref(),
            Some("{\"$$kind\":\"raw\",\"token\":{\"$redacted\":true}}")
        );
        assert_eq!(
            to_wire(&v, Privacy::Reveal).ok().as_deref(),
            Some("{\"$$kind\":\"raw\",\"token\":\"s3cret\"}")
        );
    }

    #[test]
    fn equality_is_kind_exact() {
        assert!(!equal(&Value::int(1.0), &Value::num(1.0)));
        assert!(equal(
            &Value::array(vec![Value::int(1.0)]),
            &Value::array(vec![Value::int(1.0)])
        ));
    }
}
