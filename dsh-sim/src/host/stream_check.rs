//! The stream protocol as DSH enforces it on every generation: block indexes open in
//! order (0, 1, 2, … with tool calls taking the following indexes), a delta or end only
//! for an open block, every block ended before the finish, tool calls exactly when the
//! finish is `tool_calls`, and exactly one terminal item with nothing after it.

use std::collections::BTreeSet;

use antigravity_acp::contract::{FinishReason, LlmError, StreamPart};

/// What the consumer should do after an item was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More items are expected.
    Continue,
    /// That item was the terminal one (a finish or an error).
    Terminal,
}

/// Checks one generation's stream, item by item.
#[derive(Debug, Default)]
pub struct StreamValidator {
    next_index: u32,
    open: BTreeSet<u32>,
    tool_calls: usize,
    terminal_seen: bool,
}

impl StreamValidator {
    /// A validator for a fresh stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts the next item, or says which rule it breaks.
    pub fn observe(&mut self, item: &Result<StreamPart, LlmError>) -> Result<Progress, String> {
        if self.terminal_seen {
            return Err(format!("{} after the terminal item", describe(item)));
        }
        let part = match item {
            Ok(part) => part,
            Err(_) => {
                self.terminal_seen = true;
                return Ok(Progress::Terminal);
            }
        };
        match part {
            StreamPart::BlockStart { index, .. } => self.open_block(*index, "block_start")?,
            StreamPart::BlockDelta { index, .. } => {
                if !self.open.contains(index) {
                    return Err(format!("block_delta for block {index}, which is not open"));
                }
            }
            StreamPart::BlockEnd { index } => {
                if !self.open.remove(index) {
                    return Err(format!("block_end for block {index}, which is not open"));
                }
            }
            StreamPart::ToolCall { index, call_id, .. } => {
                self.open_block(*index, "tool_call")?;
                self.open.remove(index);
                if call_id.is_empty() {
                    return Err(format!("tool_call {index} has an empty call_id"));
                }
                self.tool_calls += 1;
            }
            StreamPart::ContextOccupancy { .. } => {}
            StreamPart::Finish { reason } => {
                self.terminal_seen = true;
                self.check_finish(*reason)?;
                return Ok(Progress::Terminal);
            }
        }
        Ok(Progress::Continue)
    }

    /// The stream ended (the adapter dropped its sender); was that allowed?
    pub fn end_of_stream(&self) -> Result<(), String> {
        if self.terminal_seen {
            Ok(())
        } else {
            Err("the stream ended without a finish or an error".to_owned())
        }
    }

    fn open_block(&mut self, index: u32, what: &str) -> Result<(), String> {
        if index != self.next_index {
            return Err(format!(
                "{what} took index {index}; the next block index is {}",
                self.next_index
            ));
        }
        self.next_index += 1;
        self.open.insert(index);
        Ok(())
    }

    fn check_finish(&self, reason: FinishReason) -> Result<(), String> {
        if !self.open.is_empty() {
            return Err(format!(
                "finish while block(s) {:?} were still open",
                self.open
            ));
        }
        match (reason, self.tool_calls) {
            (FinishReason::ToolCalls, 0) => {
                Err("finish(tool_calls) without any tool_call".to_owned())
            }
            (FinishReason::ToolCalls, _) | (_, 0) => Ok(()),
            (other, n) => Err(format!(
                "{n} tool_call(s) streamed but the finish was {}",
                crate::host::transcript::finish_name(other)
            )),
        }
    }
}

/// A short description of a stream item for violation messages.
pub fn describe(item: &Result<StreamPart, LlmError>) -> String {
    match item {
        Ok(part) => serde_json::to_string(part).unwrap_or_else(|_| format!("{part:?}")),
        Err(error) => format!("error {error}"),
    }
}
