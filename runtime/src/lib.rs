//! The katari runtime: values, the lowered program, the evaluator with its handlers, and the
//! interface natives implement.

pub mod atomic;
pub mod budget;
pub mod callable;
pub mod control;
pub mod eval;
pub mod ir;
pub mod listener;
pub mod lower;
pub mod machine;
pub mod mcp;
pub mod native;
pub mod privacy;
pub mod reactor;
pub mod reflect;
#[cfg(test)]
mod test_support;
pub mod tier;
pub mod value;
pub mod wire;

/// The stack of each thread that runs a parallel branch (virtual memory; pages are committed
/// only as deep recursion touches them).
pub const BRANCH_STACK: usize = 256 * 1024 * 1024;

/// An error and its sources, `: `-separated, without repeating a source whose text the message
/// already contains (reqwest and rmcp errors nest their causes).
pub fn describe_error(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}
