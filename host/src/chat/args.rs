//! The flags of `katari chat` (`host.md` §7.1, §7.5) and their validation: ranges, counts and
//! refused `--extra` keys are usage errors that name the flag, the range and the value.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Map, Value};

use crate::config::Params;

/// `katari chat [AGENT] [--project P] [--thread ID] [-m MSG] [--no-stream] [...]`.
#[derive(Debug, Args, Default)]
pub struct ChatArgs {
    /// The agent to chat with (omit with --project for a project chat).
    pub agent: Option<String>,
    /// View this project: its prompts, servers and script tools, and the membership's brain.
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Resume a stored thread (any unique prefix of 8 or more characters).
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,
    /// Send one message, print the reply on stdout and exit (`-` reads it from stdin).
    #[arg(
        short = 'm',
        long = "message",
        value_name = "MSG",
        allow_hyphen_values = true
    )]
    pub message: Option<String>,
    /// Ask for the reply whole; with -m, print one JSON object.
    #[arg(long)]
    pub no_stream: bool,
    /// Replace the agent's system prompt for this chat.
    #[arg(long, value_name = "TEXT", conflicts_with = "system_file")]
    pub system: Option<String>,
    /// Replace the agent's system prompt with a file's text.
    #[arg(long, value_name = "PATH")]
    pub system_file: Option<PathBuf>,
    /// Append to the system block for this chat.
    #[arg(long, value_name = "TEXT")]
    pub system_append: Option<String>,
    /// The personality overlay to use.
    #[arg(long, value_name = "NAME")]
    pub personality: Option<String>,
    /// Sampling temperature, 0 to 2.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub temperature: Option<f64>,
    /// Nucleus sampling, 0 to 1.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub top_p: Option<f64>,
    /// Top-k sampling (not sent to OpenAI-compatible endpoints).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub top_k: Option<i64>,
    /// Cap on reply tokens.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
    /// Seed for reproducible sampling where the provider supports it.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<i64>,
    /// A stop sequence (at most 4).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub stop: Vec<String>,
    /// Only MCP tools matching SERVER/TOOL, SERVER/* or a kt_ name may be used.
    #[arg(long, value_name = "PATTERN")]
    pub allow_tool: Vec<String>,
    /// A provider-specific request field KEY=VALUE (numbers are parsed).
    #[arg(long, value_name = "KEY=VALUE")]
    pub extra: Vec<String>,
    /// Offer the get_secret tool, which lets the model read secrets.toml.
    #[arg(long)]
    pub allow_secrets: bool,
    /// Tool rounds allowed per turn (overrides chat.max_tool_rounds).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tool_rounds: Option<i64>,
}

/// The per-call sampling flags, validated (§7.5.2).
pub fn flag_params(args: &ChatArgs) -> Result<Params, String> {
    let mut p = Params::default();
    if let Some(t) = args.temperature {
        p.temperature = Some(ranged("--temperature", t, 2.0)?);
    }
    if let Some(t) = args.top_p {
        p.top_p = Some(ranged("--top-p", t, 1.0)?);
    }
    if let Some(k) = args.top_k {
        p.top_k = Some(positive("--top-k", k)?);
    }
    if let Some(m) = args.max_tokens {
        p.max_tokens = Some(positive("--max-tokens", m)?);
    }
    p.seed = args.seed;
    if args.stop.len() > 4 {
        return Err("--stop can be given at most 4 times".to_string());
    }
    if !args.stop.is_empty() {
        p.stop = Some(args.stop.clone());
    }
    for item in &args.extra {
        let (key, value) = parse_extra(item)?;
        p.extra.insert(key, value);
    }
    Ok(p)
}

/// `--max-tool-rounds`, validated.
pub fn max_tool_rounds(args: &ChatArgs) -> Result<Option<u32>, String> {
    args.max_tool_rounds
        .map(|n| {
            positive("--max-tool-rounds", n).and_then(|n| {
                u32::try_from(n).map_err(|_| format!("--max-tool-rounds is too large (got {n})"))
            })
        })
        .transpose()
}

/// `--allow-tool` patterns, validated: `SERVER/TOOL`, `SERVER/*` or a `kt_` name.
pub fn allow_tools(args: &ChatArgs) -> Result<Vec<String>, String> {
    for p in &args.allow_tool {
        let ok = match p.split_once('/') {
            Some((server, tool)) => !server.is_empty() && !tool.is_empty() && !tool.contains('/'),
            None => p.starts_with("kt_") && p.len() > 3,
        };
        if !ok {
            return Err(format!(
                "--allow-tool takes SERVER/TOOL, SERVER/* or a kt_ name (got '{p}')"
            ));
        }
    }
    Ok(args.allow_tool.clone())
}

/// Whether `--allow-tool` lets the script tool `name` be offered (§7.6.4).
pub fn allows_script(patterns: &[String], name: &str) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| p == name)
}

fn ranged(flag: &str, value: f64, hi: f64) -> Result<f64, String> {
    if value.is_finite() && (0.0..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{flag} must be between 0 and {hi} (got {value})"))
    }
}

fn positive(flag: &str, value: i64) -> Result<u64, String> {
    u64::try_from(value)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("{flag} must be a positive integer (got {value})"))
}

/// The keys `--extra` may not set (§7.5.3).
const RESERVED: &[&str] = &["model", "messages", "tools", "stream"];

/// One `KEY=VALUE` of `--extra` (or an unknown `/set` key): numbers are parsed, everything else
/// stays a string.
pub fn parse_extra(item: &str) -> Result<(String, Value), String> {
    let Some((key, value)) = item.split_once('=') else {
        return Err(format!("--extra takes KEY=VALUE (got '{item}')"));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("--extra takes KEY=VALUE (got '{item}')"));
    }
    if RESERVED.contains(&key) {
        return Err(format!(
            "--extra cannot set '{key}': katari sets model, messages, tools and stream itself"
        ));
    }
    Ok((key.to_string(), number_or_string(value)))
}

/// A number when the text is one (integers stay integers), else the text.
pub fn number_or_string(text: &str) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() && !text.trim().is_empty() => Value::from(f),
        _ => Value::String(text.to_string()),
    }
}

/// `lower` overridden by every field `upper` sets (§7.5.1: defaults, flags, `/set`).
pub fn layer(lower: &Params, upper: &Params) -> Params {
    let mut extra: Map<String, Value> = lower.extra.clone();
    for (k, v) in &upper.extra {
        extra.insert(k.clone(), v.clone());
    }
    Params {
        temperature: upper.temperature.or(lower.temperature),
        top_p: upper.top_p.or(lower.top_p),
        top_k: upper.top_k.or(lower.top_k),
        max_tokens: upper.max_tokens.or(lower.max_tokens),
        seed: upper.seed.or(lower.seed),
        stop: upper.stop.clone().or_else(|| lower.stop.clone()),
        extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_counts_name_the_flag_and_value() {
        let args = ChatArgs {
            temperature: Some(3.5),
            ..ChatArgs::default()
        };
        assert_eq!(
            flag_params(&args).expect_err("an error"),
            "--temperature must be between 0 and 2 (got 3.5)"
        );
        let args = ChatArgs {
            stop: vec!["a".into(); 5],
            ..ChatArgs::default()
        };
        assert_eq!(
            flag_params(&args).expect_err("an error"),
            "--stop can be given at most 4 times"
        );
    }

    #[test]
    fn extra_values_are_numbers_when_they_parse() {
        assert_eq!(
            parse_extra("a=1.1").expect("valid"),
            ("a".into(), Value::from(1.1))
        );
        assert_eq!(
            parse_extra("n=3").expect("valid"),
            ("n".into(), Value::from(3))
        );
        assert_eq!(
            parse_extra("b=fast").expect("valid"),
            ("b".into(), Value::from("fast"))
        );
        assert!(
            parse_extra("model=x")
                .expect_err("an error")
                .contains("cannot set 'model'")
        );
    }

    #[test]
    fn later_layers_win_field_by_field() {
        let low = Params {
            temperature: Some(0.1),
            max_tokens: Some(10),
            ..Params::default()
        };
        let high = Params {
            temperature: Some(0.9),
            ..Params::default()
        };
        let p = layer(&low, &high);
        assert_eq!(p.temperature, Some(0.9));
        assert_eq!(p.max_tokens, Some(10));
    }
}
