//! History trimming (`host.md` §8.5): with `context_window` set, the oldest whole turns are left
//! out of a request until its estimated size fits. A pure function, so the engine decides when
//! to call it and how to report `[history trimmed: N oldest turns not sent]`.

use crate::llm::ToolSpec;
use crate::message::Message;

/// The reply budget assumed when the request sets no `max_tokens`.
pub const DEFAULT_REPLY_TOKENS: u64 = 1024;

/// How many of the oldest `turns` to leave out so that the estimate — bytes ÷ 4 over the system
/// block, the history (kept turns and `current`) and the tool schemas, plus `max_tokens` (or
/// [`DEFAULT_REPLY_TOKENS`]) — fits `context_window`. Whole turns only; `current` is never
/// trimmed, so when even `current` alone does not fit every earlier turn is left out and the
/// request goes as it is (the provider says whether it fits).
pub fn trim(
    system: Option<&str>,
    turns: &[Vec<Message>],
    current: &[Message],
    tools: &[ToolSpec],
    max_tokens: Option<u64>,
    context_window: u64,
) -> usize {
    let fixed = system.map_or(0, |s| s.len() as u64)
        + messages_bytes(current)
        + tools.iter().map(tool_bytes).sum::<u64>();
    let turn_bytes: Vec<u64> = turns.iter().map(|t| messages_bytes(t)).collect();
    let mut history: u64 = turn_bytes.iter().sum();
    let reply = max_tokens.unwrap_or(DEFAULT_REPLY_TOKENS);
    let fits = |bytes: u64| (bytes.div_ceil(4)).saturating_add(reply) <= context_window;
    let mut dropped = 0;
    while dropped < turns.len() && !fits(fixed + history) {
        history -= turn_bytes[dropped];
        dropped += 1;
    }
    dropped
}

/// The bytes of what a message sends: its text, its calls' ids, names and arguments, and the id
/// of the call it answers.
fn message_bytes(message: &Message) -> u64 {
    let calls: usize = message
        .tool_calls
        .iter()
        .map(|c| c.id.len() + c.name.len() + c.arguments.len())
        .sum();
    (message.content.as_ref().map_or(0, String::len)
        + calls
        + message.tool_call_id.as_ref().map_or(0, String::len)) as u64
}

fn messages_bytes(messages: &[Message]) -> u64 {
    messages.iter().map(message_bytes).sum()
}

/// A tool's name, description and compact JSON schema.
fn tool_bytes(tool: &ToolSpec) -> u64 {
    (tool.name.len() + tool.description.len() + tool.parameters.to_string().len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use serde_json::json;

    /// A turn of `n` bytes: a user message and an answer.
    fn turn(n: usize) -> Vec<Message> {
        vec![
            Message::user("u".repeat(n / 2)),
            Message::assistant(Some("a".repeat(n - n / 2)), vec![]),
        ]
    }

    #[test]
    fn nothing_is_dropped_when_everything_fits() {
        let turns = vec![turn(400), turn(400)];
        // 800 + 40 bytes = 210 tokens, plus 1024 for the reply.
        assert_eq!(trim(None, &turns, &turn(40), &[], None, 1234), 0);
        assert_eq!(trim(None, &[], &turn(40), &[], None, 1034), 0);
    }

    #[test]
    fn oldest_whole_turns_go_first_until_it_fits() {
        let turns = vec![turn(4000), turn(4000), turn(400)];
        // Everything: (8400 + 400) / 4 = 2200 tokens + 100 for the reply.
        assert_eq!(trim(None, &turns, &turn(400), &[], Some(100), 2300), 0);
        assert_eq!(trim(None, &turns, &turn(400), &[], Some(100), 2299), 1);
        // Without the first turn: 1200 + 100.
        assert_eq!(trim(None, &turns, &turn(400), &[], Some(100), 1300), 1);
        assert_eq!(trim(None, &turns, &turn(400), &[], Some(100), 1299), 2);
    }

    #[test]
    fn the_current_turn_is_never_trimmed() {
        let turns = vec![turn(40), turn(40)];
        // The current turn alone is 2500 tokens: every earlier turn goes, and no more.
        assert_eq!(trim(None, &turns, &turn(10_000), &[], None, 100), 2);
        assert_eq!(trim(None, &[], &turn(10_000), &[], None, 100), 0);
    }

    #[test]
    fn the_system_block_tools_calls_and_reply_budget_count() {
        let turns = vec![turn(400)];
        let current = turn(0);
        // The turn alone: 100 tokens + 1024.
        assert_eq!(trim(None, &turns, &current, &[], None, 1124), 0);
        let system = "s".repeat(4);
        assert_eq!(trim(Some(&system), &turns, &current, &[], None, 1124), 1);
        let tool = ToolSpec {
            name: "f".into(),
            description: String::new(),
            parameters: json!({}),
        };
        assert_eq!(trim(None, &turns, &current, &[tool], None, 1124), 1);
        assert_eq!(trim(None, &turns, &current, &[], Some(1025), 1124), 1);
        let with_call = vec![
            Message::user("u".repeat(200)),
            Message::assistant(
                None,
                vec![ToolCall {
                    id: "c".into(),
                    name: "f".into(),
                    arguments: "{}".into(),
                }],
            ),
            Message::tool("c", "r".repeat(196)),
        ];
        // 200 + 4 + 1 + 196 = 401 bytes: 101 tokens.
        assert_eq!(trim(None, &[with_call], &current, &[], Some(100), 201), 0);
        assert_eq!(trim(None, &[turn(404)], &current, &[], Some(100), 201), 0);
        assert_eq!(trim(None, &[turn(405)], &current, &[], Some(100), 201), 1);
    }
}
