//! One turn of a chat (`host.md` §7.7, §7.9.6, §7.10): the request, the streamed reply, the tool
//! loop with its limits, and the thread written as the turn happens. Everything the person
//! should see is reported as an [`Event`]; nothing here touches a terminal.
//!
//! **Invariant (pairing, §7.7.7):** every request carries the complete turns of the thread plus
//! the messages of the current turn, and the current turn only grows by an assistant message
//! followed by exactly one tool message per call id, all added before the next request. The log
//! receives the same rows as they happen (the assistant message before its calls run, each result
//! in call order as soon as it is known), and incomplete turns are never read back
//! ([`ThreadLog::history`]), so a crash, a cancellation or an error cannot leave a call without
//! its result in anything sent to a model.
//!
//! At most [`MAX_CALLS_PER_REPLY`] calls of one model reply run; the others get `round_limit`
//! results without running, so a reply of thousands of calls still pairs every call.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::watch;

use crate::llm::{Delta, LlmError, Provider, Reply, Request, Sampling, Usage};
use crate::log::{LogError, ThreadLog, TurnRef};
use crate::message::{Message, ToolCall};
use crate::tools::{ErrorKind, ToolError, ToolResult, ToolSet, canonical};

/// Meta-function calls of one round run at most this many at a time (§7.7.2).
pub const MAX_CONCURRENT_CALLS: usize = 8;

/// At most this many tool calls of one model reply run; the others are answered with
/// `round_limit` without running, so a reply of thousands of calls costs no more than this.
pub const MAX_CALLS_PER_REPLY: usize = 64;

/// What the person sees of a turn, in the order it happens.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A request is about to be sent (the host shows its spinner until the first token).
    Request { round: u32, tools: usize },
    /// A piece of the model's text.
    Text(String),
    /// The model's reply to one request is complete (the host ends a line of streamed text).
    ReplyDone,
    /// A tool call is about to run (or be refused): compact arguments as the model sent them.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// A tool call finished: the size of what the model receives, or the error (its message
    /// raw).
    ToolResult {
        id: String,
        name: String,
        result: Result<usize, ToolError>,
    },
    /// A line for the person about the loop itself (limits, trimming), already worded.
    Notice(String),
}

/// How one turn runs: everything the lens and the flags decided.
#[derive(Clone, Debug)]
pub struct TurnConfig {
    pub model: String,
    /// The system block, rebuilt by the host for this turn (§7.4.4).
    pub system: Option<String>,
    pub sampling: Sampling,
    pub stream: bool,
    /// The project lens recorded on every row (§7.9.1).
    pub project: Option<String>,
    pub max_tool_rounds: u32,
    pub max_identical_calls: u32,
    pub tool_timeout: Duration,
    /// With `context_window`, the oldest whole turns are left out until the request fits (§8.5).
    pub context_window: Option<u64>,
}

/// One tool call of the turn as the `--no-stream` JSON reports it (§7.8.4).
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    pub id: String,
    pub name: String,
    /// The parsed arguments, or the raw text when they did not parse.
    pub arguments: Value,
    pub is_error: bool,
}

/// A turn that ended with an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOutcome {
    pub turn: TurnRef,
    /// The text of every reply of the turn, joined by newlines.
    pub reply: String,
    pub tool_calls: Vec<CallRecord>,
    /// Summed over the turn's requests; `None` when the provider reported none.
    pub usage: Option<Usage>,
    /// The finish reason of the last reply.
    pub finish_reason: Option<String>,
}

/// Why a turn failed. The turn's rows are marked `error` (when it had begun).
#[derive(Clone, Debug, PartialEq)]
pub enum TurnError {
    Llm(LlmError),
    Log(LogError),
    /// Cancelled by the person (Ctrl-C).
    Cancelled,
}

impl std::fmt::Display for TurnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TurnError::Llm(e) => f.write_str(&e.message),
            TurnError::Log(e) => write!(f, "cannot write the thread: {e}"),
            TurnError::Cancelled => f.write_str("the turn was cancelled"),
        }
    }
}

impl From<LogError> for TurnError {
    fn from(e: LogError) -> TurnError {
        TurnError::Log(e)
    }
}

/// Everything a turn needs besides its message.
pub struct Turn<'a> {
    pub provider: &'a dyn Provider,
    pub tools: &'a ToolSet<'a>,
    pub log: &'a dyn ThreadLog,
    pub thread_id: &'a str,
    pub config: &'a TurnConfig,
    /// Becomes `true` when the person cancels the turn.
    pub cancel: watch::Receiver<bool>,
}

/// Runs one turn for `message`: writes it, asks the model, runs tools until the model answers
/// without them, and commits the turn. On failure or cancellation the turn's rows become
/// `error` and nothing of it will be sent to a model again.
pub async fn run_turn(
    turn: Turn<'_>,
    message: &str,
    events: &mut (dyn FnMut(Event) + Send),
) -> Result<TurnOutcome, TurnError> {
    let earlier = turn.log.history(turn.thread_id)?;
    let user = Message::user(message);
    let project = turn.config.project.as_deref();
    let at = turn.log.begin_turn(turn.thread_id, project, &user)?;
    let mut cancel = turn.cancel.clone();
    let work = turn_loop(&turn, &at, earlier, user, events);
    let result = tokio::select! {
        biased;
        _ = cancelled(&mut cancel) => Err(TurnError::Cancelled),
        r = work => r,
    };
    match result {
        Ok(outcome) => {
            turn.log.commit_turn(&at)?;
            Ok(outcome)
        }
        Err(e) => {
            // The turn is already failing: a second failure to record it leaves its rows
            // pending, which the next resume reports as interrupted all the same.
            let _ = turn.log.fail_turn(&at, &e.to_string());
            Err(e)
        }
    }
}

/// Resolves when the person cancels; never when the sender is gone without cancelling.
async fn cancelled(cancel: &mut watch::Receiver<bool>) {
    if cancel.wait_for(|c| *c).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Counts identical calls across the turn (§7.7.5).
#[derive(Default)]
struct Repeats {
    runs: HashMap<(String, String), u32>,
}

async fn turn_loop(
    turn: &Turn<'_>,
    at: &TurnRef,
    earlier: Vec<Vec<Message>>,
    user: Message,
    events: &mut (dyn FnMut(Event) + Send),
) -> Result<TurnOutcome, TurnError> {
    let config = turn.config;
    let project = config.project.as_deref();
    let mut current = vec![user];
    let mut texts: Vec<String> = Vec::new();
    let mut records: Vec<CallRecord> = Vec::new();
    let mut usage: Option<Usage> = None;
    let mut rounds: u32 = 0;
    let mut repeats = Repeats::default();
    // Set once the loop must end: the next request offers no tools.
    let mut without_tools = false;
    let mut trimmed_reported = false;
    loop {
        let offered = if without_tools {
            &[][..]
        } else {
            turn.tools.specs()
        };
        let dropped = match config.context_window {
            Some(window) => crate::llm::trim::trim(
                config.system.as_deref(),
                &earlier,
                &current,
                offered,
                config.sampling.max_tokens,
                window,
            ),
            None => 0,
        };
        if dropped > 0 && !trimmed_reported {
            trimmed_reported = true;
            events(Event::Notice(format!(
                "[history trimmed: {dropped} oldest turns not sent]"
            )));
        }
        let mut messages: Vec<Message> = earlier[dropped.min(earlier.len())..]
            .iter()
            .flatten()
            .cloned()
            .collect();
        messages.extend(current.iter().cloned());
        let request = Request {
            model: config.model.clone(),
            system: config.system.clone(),
            messages,
            tools: offered.to_vec(),
            sampling: config.sampling.clone(),
            stream: config.stream,
        };
        events(Event::Request {
            round: rounds,
            tools: request.tools.len(),
        });
        let reply: Reply = {
            let mut forward = |d: Delta| match d {
                Delta::Text(t) => events(Event::Text(t)),
                Delta::ToolCall { .. } => {}
            };
            turn.provider
                .complete(&request, &mut forward)
                .await
                .map_err(TurnError::Llm)?
        };
        events(Event::ReplyDone);
        if let Some(u) = reply.usage {
            let sum = usage.get_or_insert_with(Usage::default);
            sum.prompt_tokens += u.prompt_tokens;
            sum.completion_tokens += u.completion_tokens;
        }
        if let Some(t) = reply.text.as_ref().filter(|t| !t.is_empty()) {
            texts.push(t.clone());
        }
        let assistant = Message::assistant(reply.text.clone(), reply.tool_calls.clone());
        if reply.tool_calls.is_empty() {
            turn.log.append(at, project, &assistant)?;
            return Ok(TurnOutcome {
                turn: at.clone(),
                reply: texts.join("\n"),
                tool_calls: records,
                usage,
                finish_reason: reply.finish_reason,
            });
        }
        let refuse = if without_tools || rounds >= config.max_tool_rounds {
            Some(ToolError::new(
                ErrorKind::RoundLimit,
                format!(
                    "The tool round limit of this turn ({}) was reached; answer with what you have.",
                    config.max_tool_rounds
                ),
            ))
        } else {
            None
        };
        let calls = reply.tool_calls;
        // The assistant message is stored before its calls run and each result as soon as it
        // and every earlier one is known, so a crash leaves a record of which calls started and
        // which finished (§7.10.1). Only complete turns are ever sent to a model again.
        turn.log.append(at, project, &assistant)?;
        current.push(assistant);
        let store = Store { at, project };
        let results =
            run_round(turn, &calls, refuse.as_ref(), &mut repeats, &store, events).await?;
        let mut all_loops = true;
        for (call, result) in calls.iter().zip(&results) {
            all_loops &= matches!(result, Err(e) if e.kind == ErrorKind::LoopDetected);
            current.push(Message::tool(call.id.clone(), tool_content(result)));
            records.push(CallRecord {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
                is_error: result.is_err(),
            });
        }
        if without_tools {
            // The model called tools although none were offered: its calls are answered with
            // `round_limit` and the turn ends with whatever text it gave.
            return Ok(TurnOutcome {
                turn: at.clone(),
                reply: texts.join("\n"),
                tool_calls: records,
                usage,
                finish_reason: reply.finish_reason,
            });
        }
        if refuse.is_some() {
            without_tools = true;
            events(Event::Notice(format!(
                "[tool rounds limit reached ({}); the model was asked to answer without tools]",
                config.max_tool_rounds
            )));
        } else if all_loops {
            without_tools = true;
            events(Event::Notice(
                "[identical tool calls repeated; the model was asked to answer without tools]"
                    .to_string(),
            ));
        } else {
            rounds += 1;
        }
    }
}

/// What to do with one call of a round.
enum Plan {
    /// Answered without running (refused, unparseable, unknown, repeated too often).
    Done(ToolResult),
    /// Same as an earlier call of this round: shares its result.
    Same(usize),
    /// Run it.
    Run(Value),
}

/// Calls to run, by index in the round, with their arguments.
type Runs = Vec<(usize, Value)>;

/// Runs the calls of one round and returns their results in call order.
async fn run_round(
    turn: &Turn<'_>,
    calls: &[ToolCall],
    refuse: Option<&ToolError>,
    repeats: &mut Repeats,
    store: &Store<'_>,
    events: &mut (dyn FnMut(Event) + Send),
) -> Result<Vec<ToolResult>, TurnError> {
    let mut plans: Vec<Plan> = Vec::with_capacity(calls.len());
    let mut first: HashMap<(String, String), usize> = HashMap::new();
    let excess = calls.len().saturating_sub(MAX_CALLS_PER_REPLY);
    if excess > 0 && refuse.is_none() {
        // One line for the calls past the limit, not one per call: they may be thousands.
        events(Event::Notice(format!(
            "[{} tool calls in one reply; the first {MAX_CALLS_PER_REPLY} run, the other {excess} get round_limit]",
            calls.len()
        )));
    }
    let over = ToolError::new(
        ErrorKind::RoundLimit,
        format!(
            "This reply made {} tool calls and at most {MAX_CALLS_PER_REPLY} run per reply, so this call was not run. Make fewer calls at a time; repeat it in a later reply if it is still needed.",
            calls.len()
        ),
    );
    for (i, call) in calls.iter().enumerate() {
        if i >= MAX_CALLS_PER_REPLY {
            plans.push(Plan::Done(Err(refuse.unwrap_or(&over).clone())));
            continue;
        }
        events(Event::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: compact(&call.arguments),
        });
        let plan = if let Some(e) = refuse {
            Plan::Done(Err(e.clone()))
        } else if turn.tools.provider(&call.name).is_none() {
            Plan::Done(Err(turn.tools.unknown(&call.name)))
        } else {
            match parse_arguments(&call.name, &call.arguments) {
                Err(e) => Plan::Done(Err(e)),
                Ok(args) => {
                    let key = (call.name.clone(), canonical(&args));
                    if let Some(&j) = first.get(&key) {
                        Plan::Same(j)
                    } else {
                        first.insert(key.clone(), i);
                        let runs = repeats.runs.entry(key).or_insert(0);
                        if *runs >= turn.config.max_identical_calls {
                            Plan::Done(Err(ToolError::new(
                                ErrorKind::LoopDetected,
                                format!(
                                    "Identical call to {} already made {} times in this turn; change the arguments or answer with what you have.",
                                    call.name, runs
                                ),
                            )))
                        } else {
                            *runs += 1;
                            Plan::Run(args)
                        }
                    }
                }
            }
        };
        plans.push(plan);
    }

    let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
    for (i, plan) in plans.iter().enumerate() {
        if let Plan::Done(r) = plan {
            results[i] = Some(r.clone());
        }
    }
    let timeout = turn.config.tool_timeout;
    let run = |i: usize, args: Value| {
        let call = &calls[i];
        async move {
            let Some(provider) = turn.tools.provider(&call.name) else {
                return (i, Err(turn.tools.unknown(&call.name)));
            };
            let result = match tokio::time::timeout(timeout, provider.call(&call.name, args)).await
            {
                Ok(r) => r,
                Err(_) => Err(ToolError::new(
                    ErrorKind::Timeout,
                    format!(
                        "{} did not finish within {} s (chat.tool_timeout_secs).",
                        call.name,
                        timeout.as_secs()
                    ),
                )),
            };
            (i, result)
        }
    };
    // Concurrent providers' calls run together (at most MAX_CONCURRENT_CALLS at a time); the
    // others one after another, after them.
    let (together, alone): (Runs, Runs) = plans
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Plan::Run(args) => Some((i, args.clone())),
            _ => None,
        })
        .partition(|(i, _)| {
            turn.tools
                .provider(&calls[*i].name)
                .is_some_and(|p| p.concurrent())
        });
    let mut report = |i: usize, r: &ToolResult| {
        events(Event::ToolResult {
            id: calls[i].id.clone(),
            name: calls[i].name.clone(),
            result: match r {
                Ok(text) => Ok(text.len()),
                Err(e) => Err(e.clone()),
            },
        });
    };
    let mut written = 0;
    // Writes the results known so far, in call order, reporting each duplicate as it resolves.
    let mut flush = |results: &mut Vec<Option<ToolResult>>,
                     report: &mut dyn FnMut(usize, &ToolResult)|
     -> Result<(), TurnError> {
        while written < calls.len() {
            let i = written;
            if results[i].is_none()
                && let Plan::Same(j) = plans[i]
                && let Some(r) = results[j].clone()
            {
                report(i, &r);
                results[i] = Some(r);
            }
            let Some(r) = &results[i] else { break };
            turn.log.append(
                store.at,
                store.project,
                &Message::tool(calls[i].id.clone(), tool_content(r)),
            )?;
            written += 1;
        }
        Ok(())
    };
    for (i, r) in results.iter().enumerate().take(MAX_CALLS_PER_REPLY) {
        if let Some(r) = r {
            report(i, r);
        }
    }
    flush(&mut results, &mut report)?;
    let mut stream = futures::stream::iter(together.into_iter().map(|(i, a)| run(i, a)))
        .buffer_unordered(MAX_CONCURRENT_CALLS);
    while let Some((i, r)) = stream.next().await {
        report(i, &r);
        results[i] = Some(r);
        flush(&mut results, &mut report)?;
    }
    drop(stream);
    for (i, args) in alone {
        let (i, r) = run(i, args).await;
        report(i, &r);
        results[i] = Some(r);
        flush(&mut results, &mut report)?;
    }
    // Every call has a result by now: each was refused, run, or shares an earlier one's.
    Ok(results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(ToolError::new(
                    ErrorKind::Cancelled,
                    "The call was not run.".to_string(),
                ))
            })
        })
        .collect())
}

/// Where a round's results are written.
struct Store<'t> {
    at: &'t TurnRef,
    project: Option<&'t str>,
}

/// The tool message's text for a result.
fn tool_content(result: &ToolResult) -> String {
    match result {
        Ok(text) => text.clone(),
        Err(e) => e.payload(),
    }
}

/// The arguments of a call as a JSON object, or the `invalid_argument` error of §7.7.6.
fn parse_arguments(name: &str, text: &str) -> Result<Value, ToolError> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ToolError::new(
            ErrorKind::InvalidArgument,
            format!("The arguments of {name} must be a JSON object."),
        )),
        Err(e) => Err(ToolError::new(
            ErrorKind::InvalidArgument,
            format!(
                "The arguments of {name} did not parse as JSON ({e}); the call was not run. Send complete JSON arguments."
            ),
        )),
    }
}

/// Compact JSON of the arguments when they parse, else the text as it is.
fn compact(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| text.to_string())
}
