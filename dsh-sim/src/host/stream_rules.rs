//! The rules on `StreamChunk` as DSH reads a stream, checked on every generation: block
//! indexes open in order (0, 1, 2, … with tool calls taking the following indexes), a
//! delta only inside an open block of its type, `block-end` only for an open block and
//! carrying exactly what its deltas assembled, tool-call arguments that parse as JSON,
//! every block ended before the finish (C70), usage only before the finish, tool calls
//! only with a `tool-calls` finish (or one an abort or failure cut short), and exactly one
//! finish with nothing after it (the agent loop also reads past the finish to catch a
//! chunk the validator is no longer shown).

use std::collections::BTreeMap;

use antigravity_acp::contract::{
    ContentBlock, ContentBlockType, FinishReason, StreamChunk, TextBlock, ToolCallBlock,
};

use crate::scenario::FinishKind;

/// What the consumer should do after a chunk was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More chunks are expected.
    Continue,
    /// That chunk was the finish.
    Terminal,
}

/// A block between its `block-start` and its `block-end`, as its deltas built it.
#[derive(Debug)]
struct OpenBlock {
    block_type: ContentBlockType,
    text: String,
    tool: Option<(String, Option<String>)>,
}

/// Checks one generation's stream, chunk by chunk.
#[derive(Debug, Default)]
pub struct StreamValidator {
    next_index: u32,
    open: BTreeMap<u32, OpenBlock>,
    tool_calls: usize,
    terminal_seen: bool,
}

impl StreamValidator {
    /// A validator for a fresh stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts the next chunk, or says which rule it breaks.
    pub fn observe(&mut self, chunk: &StreamChunk) -> Result<Progress, String> {
        if self.terminal_seen {
            return Err(format!("{} after the finish", describe(chunk)));
        }
        match chunk {
            StreamChunk::BlockStart { index, block_type } => {
                self.open_block(*index, *block_type)?
            }
            StreamChunk::TextDelta { index, text } => {
                self.open_of(*index, ContentBlockType::Text, "text-delta")?
                    .text
                    .push_str(text);
            }
            StreamChunk::ReasoningDelta { index, text } => {
                self.open_of(*index, ContentBlockType::Reasoning, "reasoning-delta")?
                    .text
                    .push_str(text);
            }
            StreamChunk::ToolCallDelta {
                index,
                id,
                name,
                arguments_delta,
            } => {
                let open = self.open_of(*index, ContentBlockType::ToolCall, "tool-call-delta")?;
                if id.is_empty() {
                    return Err(format!("tool-call-delta {index} has an empty id"));
                }
                let name = name.clone().or_else(|| open.tool.as_ref()?.1.clone());
                open.tool = Some((id.clone(), name));
                open.text.push_str(arguments_delta);
            }
            StreamChunk::BlockEnd { index, block } => self.end_block(*index, block)?,
            StreamChunk::Usage { .. } => {}
            StreamChunk::Finish { reason, .. } => {
                self.terminal_seen = true;
                self.check_finish(reason)?;
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
            Err("the stream ended without a finish".to_owned())
        }
    }

    fn open_block(&mut self, index: u32, block_type: ContentBlockType) -> Result<(), String> {
        if index != self.next_index {
            return Err(format!(
                "block-start took index {index}; the next block index is {}",
                self.next_index
            ));
        }
        if !matches!(
            block_type,
            ContentBlockType::Text | ContentBlockType::Reasoning | ContentBlockType::ToolCall
        ) {
            return Err(format!(
                "block-start of a {block_type:?} block from a model"
            ));
        }
        self.next_index += 1;
        self.open.insert(
            index,
            OpenBlock {
                block_type,
                text: String::new(),
                tool: None,
            },
        );
        Ok(())
    }

    fn open_of(
        &mut self,
        index: u32,
        block_type: ContentBlockType,
        what: &str,
    ) -> Result<&mut OpenBlock, String> {
        match self.open.get_mut(&index) {
            Some(open) if open.block_type == block_type => Ok(open),
            Some(open) => Err(format!(
                "{what} for block {index}, which is a {:?} block",
                open.block_type
            )),
            None => Err(format!("{what} for block {index}, which is not open")),
        }
    }

    fn end_block(&mut self, index: u32, block: &ContentBlock) -> Result<(), String> {
        let Some(open) = self.open.remove(&index) else {
            return Err(format!("block-end for block {index}, which is not open"));
        };
        let assembled = match open.block_type {
            ContentBlockType::Text => ContentBlock::Text(TextBlock { text: open.text }),
            ContentBlockType::Reasoning => ContentBlock::Reasoning(TextBlock { text: open.text }),
            _ => {
                let Some((id, Some(name))) = open.tool else {
                    return Err(format!(
                        "tool-call block {index} ended without its id and name"
                    ));
                };
                if serde_json::from_str::<serde_json::Value>(&open.text).is_err() {
                    return Err(format!(
                        "tool-call block {index}: its arguments are not JSON: {}",
                        open.text
                    ));
                }
                self.tool_calls += 1;
                ContentBlock::ToolCall(ToolCallBlock {
                    id,
                    name,
                    arguments: open.text,
                })
            }
        };
        if *block != assembled {
            return Err(format!(
                "block-end {index} carries {block:?}, but its deltas assembled {assembled:?}"
            ));
        }
        Ok(())
    }

    fn check_finish(&self, reason: &FinishReason) -> Result<(), String> {
        if !self.open.is_empty() {
            return Err(format!(
                "finish while block(s) {:?} were still open",
                self.open.keys().collect::<Vec<_>>()
            ));
        }
        let kind = FinishKind::of(reason);
        match (kind, self.tool_calls) {
            (FinishKind::ToolCalls, 0) => {
                Err("finish(tool-calls) without any tool call".to_owned())
            }
            (FinishKind::ToolCalls, _) | (_, 0) => Ok(()),
            // An abort or a failure may cut a round short after its calls streamed; DSH
            // then keeps no tool call (`interruptedBlocks`), so this is no violation.
            (FinishKind::Aborted | FinishKind::Error, _) => Ok(()),
            (other, n) => Err(format!(
                "{n} tool call(s) streamed but the finish was {}",
                other.name()
            )),
        }
    }
}

/// A short description of a chunk for violation messages.
pub fn describe(chunk: &StreamChunk) -> String {
    serde_json::to_string(chunk).unwrap_or_else(|_| format!("{chunk:?}"))
}
