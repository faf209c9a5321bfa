//! The chat mode's `/set` and `/save` (`host.md` §12.3.4, §12.3.5): `/set KEY VALUE` overrides one
//! sampling parameter for the rest of the chat with the ranges of §7.5 (an unknown key goes into
//! `extra`, numbers parsed), `/set KEY` removes the override, and `/save` merges the parameters in
//! force into the agent's `default_params` in the file that defines it, comments kept.

use serde_json::Value;

use super::args;
use crate::config::{Agent, Config, Params};
use crate::repl::words;

/// The `/set` keys with a meaning of their own; any other key goes into `extra`.
pub const KEYS: &[&str] = &[
    "temperature",
    "top-p",
    "top-k",
    "max-tokens",
    "seed",
    "stop",
    "personality",
];

/// The most stop sequences a request may carry (§7.5).
const MAX_STOP: usize = 4;

/// A `/set` key as the parameters name it: `top-p` and `top_p` are one key.
pub fn canonical(key: &str) -> String {
    match key {
        "top-p" | "top_p" => "top_p".into(),
        "top-k" | "top_k" => "top_k".into(),
        "max-tokens" | "max_tokens" => "max_tokens".into(),
        other => other.to_string(),
    }
}

/// Applies `/set KEY VALUE` (or `/set KEY`, `value` empty) to the overrides `set`; the
/// confirmation line, or the error (nothing changed). `personality` is the caller's.
pub fn apply(set: &mut Params, key: &str, value: &str) -> Result<String, String> {
    let value = value.trim();
    let name = canonical(key);
    if value.is_empty() {
        match name.as_str() {
            "temperature" => set.temperature = None,
            "top_p" => set.top_p = None,
            "top_k" => set.top_k = None,
            "max_tokens" => set.max_tokens = None,
            "seed" => set.seed = None,
            "stop" => set.stop = None,
            _ => {
                if set.extra.remove(&name).is_none() {
                    return Err(format!("'{key}' has no override in this chat."));
                }
            }
        }
        return Ok(format!("({key} override removed)"));
    }
    let shown = match name.as_str() {
        "temperature" => {
            let v = ranged(key, value, 2.0)?;
            set.temperature = Some(v);
            number(v)
        }
        "top_p" => {
            let v = ranged(key, value, 1.0)?;
            set.top_p = Some(v);
            number(v)
        }
        "top_k" => {
            let v = positive(key, value)?;
            set.top_k = Some(v);
            v.to_string()
        }
        "max_tokens" => {
            let v = positive(key, value)?;
            set.max_tokens = Some(v);
            v.to_string()
        }
        "seed" => {
            let v: i64 = value
                .parse()
                .map_err(|_| format!("{key} must be an integer (got {value})"))?;
            set.seed = Some(v);
            v.to_string()
        }
        "stop" => {
            let items: Vec<String> = words::split(value)?.into_iter().map(|w| w.text).collect();
            if items.len() > MAX_STOP {
                return Err(format!(
                    "stop takes at most {MAX_STOP} values (got {})",
                    items.len()
                ));
            }
            let shown = Value::from(items.clone()).to_string();
            set.stop = Some(items);
            shown
        }
        _ => {
            // Checked as `--extra` checks its keys (§7.5.3).
            args::parse_extra(&format!("{name}=x"))
                .map_err(|e| e.replacen("--extra", "/set", 1))?;
            let parsed = match words::split(value)?.as_slice() {
                // A quoted value stays a string.
                [one] if one.raw.starts_with(['"', '\'']) => Value::String(one.text.clone()),
                _ => args::number_or_string(value),
            };
            let shown = match &parsed {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            set.extra.insert(name, parsed);
            shown
        }
    };
    Ok(format!("({key} = {shown} for this chat)"))
}

fn ranged(key: &str, value: &str, hi: f64) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=hi).contains(&v) => Ok(v),
        _ => Err(format!("{key} must be between 0 and {hi} (got {value})")),
    }
}

fn positive(key: &str, value: &str) -> Result<u64, String> {
    value
        .parse::<u64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("{key} must be a positive integer (got {value})"))
}

fn number(v: f64) -> String {
    katari_lang::number::format_number(v)
}

/// The overrides in force shown as `KEY = VALUE` items: every parameter of `params` that differs
/// from `defaults` (what `/save` would write).
pub fn differences(defaults: &Params, params: &Params) -> Params {
    let pick = |a: Option<f64>, b: Option<f64>| if a == b { None } else { b };
    Params {
        temperature: pick(defaults.temperature, params.temperature),
        top_p: pick(defaults.top_p, params.top_p),
        top_k: (defaults.top_k != params.top_k)
            .then_some(params.top_k)
            .flatten(),
        max_tokens: (defaults.max_tokens != params.max_tokens)
            .then_some(params.max_tokens)
            .flatten(),
        seed: (defaults.seed != params.seed)
            .then_some(params.seed)
            .flatten(),
        stop: (defaults.stop != params.stop)
            .then(|| params.stop.clone())
            .flatten(),
        extra: params
            .extra
            .iter()
            .filter(|(k, v)| defaults.extra.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// `KEY = VALUE` for each parameter `params` sets, in the order of §7.5.
pub fn describe(params: &Params) -> Vec<String> {
    let mut items = Vec::new();
    let mut add = |k: &str, v: String| items.push(format!("{k} = {v}"));
    if let Some(v) = params.temperature {
        add("temperature", number(v));
    }
    if let Some(v) = params.top_p {
        add("top_p", number(v));
    }
    if let Some(v) = params.top_k {
        add("top_k", v.to_string());
    }
    if let Some(v) = params.max_tokens {
        add("max_tokens", v.to_string());
    }
    if let Some(v) = params.seed {
        add("seed", v.to_string());
    }
    if let Some(v) = &params.stop {
        add("stop", Value::from(v.clone()).to_string());
    }
    for (k, v) in &params.extra {
        add(&format!("extra.{k}"), v.to_string());
    }
    items
}

/// Whether `params` sets nothing.
pub fn is_empty(params: &Params) -> bool {
    describe(params).is_empty()
}

/// `/save`: merges `changes` into `[agent.NAME.default_params]` of the file defining `agent`
/// (§12.3.5, §4.8); the file written, or the error.
pub fn save(config: &Config, agent: &Agent, changes: &Params) -> Result<Config, String> {
    let file = &agent.origin.file;
    let mut edits = crate::config::edit::Edits::new(config);
    edits
        .default_params(file, &agent.name, changes)
        .map_err(|e| e.message)?;
    edits.commit().map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_keys_are_checked_against_their_ranges() {
        let mut p = Params::default();
        assert_eq!(
            apply(&mut p, "temperature", "0.5"),
            Ok("(temperature = 0.5 for this chat)".into())
        );
        assert_eq!(p.temperature, Some(0.5));
        assert_eq!(
            apply(&mut p, "temperature", "3.5"),
            Err("temperature must be between 0 and 2 (got 3.5)".into())
        );
        assert_eq!(p.temperature, Some(0.5));
        assert_eq!(
            apply(&mut p, "top-p", "2"),
            Err("top-p must be between 0 and 1 (got 2)".into())
        );
        assert!(apply(&mut p, "max-tokens", "0").is_err());
        assert!(apply(&mut p, "seed", "x").is_err());
        assert_eq!(
            apply(&mut p, "top_k", "40"),
            Ok("(top_k = 40 for this chat)".into())
        );
        assert_eq!(p.top_k, Some(40));
        assert_eq!(
            apply(&mut p, "temperature", ""),
            Ok("(temperature override removed)".into())
        );
        assert_eq!(p.temperature, None);
    }

    #[test]
    fn stop_replaces_the_list_with_up_to_four_quoted_values() {
        let mut p = Params {
            stop: Some(vec!["old".into()]),
            ..Params::default()
        };
        assert_eq!(
            apply(&mut p, "stop", r#""END" "two words" x"#),
            Ok(r#"(stop = ["END","two words","x"] for this chat)"#.into())
        );
        assert_eq!(
            p.stop,
            Some(vec!["END".into(), "two words".into(), "x".into()])
        );
        assert!(apply(&mut p, "stop", "a b c d e").is_err());
    }

    #[test]
    fn other_keys_go_into_extra_with_numbers_parsed() {
        let mut p = Params::default();
        apply(&mut p, "min_p", "0.05").expect("set");
        apply(&mut p, "mode", "fast").expect("set");
        apply(&mut p, "label", "\"42\"").expect("set");
        assert_eq!(p.extra["min_p"], json!(0.05));
        assert_eq!(p.extra["mode"], json!("fast"));
        assert_eq!(p.extra["label"], json!("42"));
        assert!(
            apply(&mut p, "model", "x")
                .expect_err("refused")
                .contains("/set cannot set 'model'")
        );
        apply(&mut p, "mode", "").expect("removed");
        assert!(!p.extra.contains_key("mode"));
    }

    #[test]
    fn differences_are_what_save_writes() {
        let defaults = Params {
            temperature: Some(0.2),
            seed: Some(1),
            ..Params::default()
        };
        let params = Params {
            temperature: Some(0.7),
            seed: Some(1),
            max_tokens: Some(10),
            ..Params::default()
        };
        assert_eq!(
            describe(&differences(&defaults, &params)),
            ["temperature = 0.7", "max_tokens = 10"]
        );
    }
}
