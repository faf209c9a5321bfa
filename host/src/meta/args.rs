//! The parameters of one meta-function call (`host.md` §10.2), read strictly: a value of the
//! wrong type is an `invalid_argument` error naming the parameter, never a guess. `null` counts
//! as absent; parameters the function does not take are ignored.

use katari_chat::tools::{ErrorKind, ToolError};
use serde_json::{Map, Value};

/// The arguments object of a call of `function`.
pub struct Args<'a> {
    function: &'a str,
    map: Map<String, Value>,
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorKind::InvalidArgument, message)
}

impl<'a> Args<'a> {
    pub fn new(function: &'a str, arguments: Value) -> Result<Args<'a>, ToolError> {
        match arguments {
            Value::Object(map) => Ok(Args { function, map }),
            Value::Null => Ok(Args {
                function,
                map: Map::new(),
            }),
            _ => Err(invalid(format!(
                "The arguments of {function} must be a JSON object."
            ))),
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, what: &str) -> ToolError {
        invalid(format!(
            "Parameter '{key}' of {} must be {what}.",
            self.function
        ))
    }

    /// A required string.
    pub fn required(&self, key: &str) -> Result<&str, ToolError> {
        match self.get(key) {
            None => Err(invalid(format!(
                "Parameter '{key}' of {} is required.",
                self.function
            ))),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    /// An optional string.
    pub fn string(&self, key: &str) -> Result<Option<&str>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    /// An optional integer (a number with no fraction; out-of-range values saturate).
    pub fn integer(&self, key: &str) -> Result<Option<i64>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    Ok(Some(i))
                } else if n.as_u64().is_some() {
                    Ok(Some(i64::MAX))
                } else {
                    match n.as_f64() {
                        Some(f) if f.is_finite() && f.fract() == 0.0 => Ok(Some(f as i64)),
                        _ => Err(self.wrong(key, "an integer")),
                    }
                }
            }
            Some(_) => Err(self.wrong(key, "an integer")),
        }
    }

    /// An optional integer ≥ 0.
    pub fn natural(&self, key: &str) -> Result<Option<u64>, ToolError> {
        match self.integer(key) {
            Ok(Some(i)) if i < 0 => Err(self.wrong(key, "an integer ≥ 0")),
            Ok(i) => Ok(i.map(|i| i as u64)),
            Err(_) => Err(self.wrong(key, "an integer ≥ 0")),
        }
    }

    /// An optional object, `{}` when absent.
    pub fn object(&self, key: &str) -> Result<Map<String, Value>, ToolError> {
        match self.get(key) {
            None => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(_) => Err(self.wrong(key, "an object")),
        }
    }

    /// An optional object whose values must be strings; `values` names them in the message
    /// for a value that is not (`Prompt arguments must be strings; 'NAME' is not.`).
    pub fn strings(&self, key: &str, values: &str) -> Result<Vec<(String, String)>, ToolError> {
        self.object(key)?
            .into_iter()
            .map(|(name, value)| match value {
                Value::String(s) => Ok((name, s)),
                _ => Err(invalid(format!(
                    "{values} must be strings; '{name}' is not."
                ))),
            })
            .collect()
    }
}
