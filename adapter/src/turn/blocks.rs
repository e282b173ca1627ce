//! `BlockWriter`: turns the server's text and reasoning deltas, and the bridge's tool
//! calls, into DSH's chunks with stable indexes (C70). A text or reasoning block opens
//! (`block-start`) on its first delta, stays open while deltas of its kind follow, and
//! closes (`block-end` carrying the text its deltas assembled) before any other block,
//! tool call or finish. A tool call is one whole block: `block-start(tool-call)`, one
//! `tool-call-delta` with the whole JSON, `block-end` with the `ToolCallBlock`. Indexes
//! count from 0 in every generation's stream. A generation with DSH's `maxTokens` has an
//! output budget in characters ([`CHARS_PER_TOKEN`] per token, text and reasoning
//! together): the delta that would pass it is cut at the budget and the writer reports the
//! cap as reached.

use crate::contract::{ContentBlock, ContentBlockType, StreamChunk, TextBlock, ToolCallBlock};

/// The open text or reasoning block.
#[derive(Debug)]
struct OpenBlock {
    index: u32,
    kind: ContentBlockType,
    text: String,
}

/// How many characters of output one token of DSH's `maxTokens` allows. The server
/// reports no token counts, so the cap is enforced on characters: about four per token for
/// English text, generous for other scripts, never tighter than a token count would be.
pub(crate) const CHARS_PER_TOKEN: u64 = 4;

/// The block bookkeeping of one generation's stream.
#[derive(Debug, Default)]
pub(crate) struct BlockWriter {
    next_index: u32,
    open: Option<OpenBlock>,
    /// Characters of text and reasoning still allowed (`None`: no cap).
    budget: Option<u64>,
    capped: bool,
}

impl BlockWriter {
    /// A writer for a generation with DSH's `maxTokens` (`None`: no cap).
    pub(crate) fn with_max_tokens(max_tokens: Option<u64>) -> Self {
        Self {
            budget: max_tokens.map(|tokens| tokens.saturating_mul(CHARS_PER_TOKEN)),
            ..Self::default()
        }
    }

    /// Whether output was cut because the generation reached its cap.
    pub(crate) fn is_capped(&self) -> bool {
        self.capped
    }

    /// `text`, cut to what the budget still allows.
    fn within_budget(&mut self, text: String) -> String {
        let Some(budget) = self.budget.as_mut() else {
            return text;
        };
        let chars = text.chars().count() as u64;
        if chars <= *budget {
            *budget -= chars;
            return text;
        }
        self.capped = true;
        let keep = usize::try_from(*budget).unwrap_or(usize::MAX);
        *budget = 0;
        text.chars().take(keep).collect()
    }

    /// The chunks for one delta of `kind` (text or reasoning).
    pub(crate) fn delta(&mut self, kind: ContentBlockType, text: String) -> Vec<StreamChunk> {
        let text = self.within_budget(text);
        if text.is_empty() && self.capped {
            return Vec::new();
        }
        let mut chunks = Vec::with_capacity(3);
        let reopen = self.open.as_ref().is_none_or(|open| open.kind != kind);
        if reopen {
            chunks.extend(self.close());
            let index = self.take_index();
            self.open = Some(OpenBlock {
                index,
                kind,
                text: String::new(),
            });
            chunks.push(StreamChunk::BlockStart {
                index,
                block_type: kind,
            });
        }
        if let Some(open) = self.open.as_mut() {
            open.text.push_str(&text);
            let index = open.index;
            chunks.push(match kind {
                ContentBlockType::Reasoning => StreamChunk::ReasoningDelta { index, text },
                _ => StreamChunk::TextDelta { index, text },
            });
        }
        chunks
    }

    /// Closes the open block, if any, with the block its deltas assembled.
    pub(crate) fn close(&mut self) -> Option<StreamChunk> {
        self.open.take().map(|open| {
            let text = TextBlock { text: open.text };
            let block = match open.kind {
                ContentBlockType::Reasoning => ContentBlock::Reasoning(text),
                _ => ContentBlock::Text(text),
            };
            StreamChunk::BlockEnd {
                index: open.index,
                block,
            }
        })
    }

    /// Closes the open block and writes one whole tool call at the next index.
    pub(crate) fn tool_call(&mut self, call: ToolCallBlock) -> Vec<StreamChunk> {
        let mut chunks = Vec::with_capacity(4);
        chunks.extend(self.close());
        let index = self.take_index();
        chunks.push(StreamChunk::BlockStart {
            index,
            block_type: ContentBlockType::ToolCall,
        });
        chunks.push(StreamChunk::ToolCallDelta {
            index,
            id: call.id.clone(),
            name: Some(call.name.clone()),
            arguments_delta: call.arguments.clone(),
        });
        chunks.push(StreamChunk::BlockEnd {
            index,
            block: ContentBlock::ToolCall(call),
        });
        chunks
    }

    /// Whether this generation's stream has any block yet (an `end_turn` without one is
    /// an empty response).
    pub(crate) fn has_content(&self) -> bool {
        self.next_index > 0
    }

    fn take_index(&mut self) -> u32 {
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::StreamChunk::{
        BlockEnd, BlockStart, ReasoningDelta, TextDelta, ToolCallDelta,
    };

    #[test]
    fn kinds_alternate_into_closed_blocks_with_rising_indexes() {
        let mut writer = BlockWriter::default();
        assert!(!writer.has_content());
        let mut chunks = writer.delta(ContentBlockType::Reasoning, "a".into());
        chunks.extend(writer.delta(ContentBlockType::Reasoning, "b".into()));
        chunks.extend(writer.delta(ContentBlockType::Text, "c".into()));
        let call = ToolCallBlock {
            id: "call_1".into(),
            name: "read".into(),
            arguments: r#"{"p":1}"#.into(),
        };
        chunks.extend(writer.tool_call(call.clone()));
        assert_eq!(
            chunks,
            vec![
                BlockStart {
                    index: 0,
                    block_type: ContentBlockType::Reasoning
                },
                ReasoningDelta {
                    index: 0,
                    text: "a".into()
                },
                ReasoningDelta {
                    index: 0,
                    text: "b".into()
                },
                BlockEnd {
                    index: 0,
                    block: ContentBlock::reasoning("ab")
                },
                BlockStart {
                    index: 1,
                    block_type: ContentBlockType::Text
                },
                TextDelta {
                    index: 1,
                    text: "c".into()
                },
                BlockEnd {
                    index: 1,
                    block: ContentBlock::text("c")
                },
                BlockStart {
                    index: 2,
                    block_type: ContentBlockType::ToolCall
                },
                ToolCallDelta {
                    index: 2,
                    id: "call_1".into(),
                    name: Some("read".into()),
                    arguments_delta: r#"{"p":1}"#.into(),
                },
                BlockEnd {
                    index: 2,
                    block: ContentBlock::ToolCall(call)
                },
            ]
        );
        assert!(writer.has_content());
        assert_eq!(writer.close(), None);
        assert_eq!(
            writer.delta(ContentBlockType::Text, "d".into())[0],
            BlockStart {
                index: 3,
                block_type: ContentBlockType::Text
            }
        );
    }

    /// With `maxTokens` 2 the generation may emit 8 characters (text and reasoning
    /// together): the delta that passes the budget is cut there, and the cap is reported
    /// only once something was cut.
    #[test]
    fn max_tokens_cuts_the_output_at_its_budget() {
        let mut writer = BlockWriter::with_max_tokens(Some(2));
        let mut chunks = writer.delta(ContentBlockType::Reasoning, "thin".into());
        chunks.extend(writer.delta(ContentBlockType::Text, "king".into()));
        assert!(!writer.is_capped(), "exactly the budget is no cut");
        assert!(writer.delta(ContentBlockType::Text, "!".into()).is_empty());
        assert!(writer.is_capped());
        let mut writer = BlockWriter::with_max_tokens(Some(1));
        let cut = writer.delta(ContentBlockType::Text, "héllo wörld".into());
        assert_eq!(
            cut.last(),
            Some(&TextDelta {
                index: 0,
                text: "héll".into()
            })
        );
        assert!(writer.is_capped());
        assert_eq!(
            writer.close(),
            Some(BlockEnd {
                index: 0,
                block: ContentBlock::text("héll")
            })
        );
        let mut free = BlockWriter::with_max_tokens(None);
        free.delta(ContentBlockType::Text, "x".repeat(10_000));
        assert!(!free.is_capped());
    }
}
