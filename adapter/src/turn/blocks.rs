//! `BlockWriter`: turns text and reasoning deltas into DSH block parts with stable
//! indexes. A block opens on its first delta, stays open while deltas of its kind follow,
//! and closes before any other block, tool call or finish; tool calls take the following
//! indexes. Indexes count from 0 in every generation's stream.

use crate::contract::{BlockKind, StreamPart};

/// The block bookkeeping of one generation's stream.
#[derive(Debug, Default)]
pub(crate) struct BlockWriter {
    next_index: u32,
    open: Option<(u32, BlockKind)>,
}

impl BlockWriter {
    /// The parts for one delta of `kind`.
    pub(crate) fn delta(&mut self, kind: BlockKind, text: String) -> Vec<StreamPart> {
        let mut parts = Vec::with_capacity(3);
        let index = match self.open {
            Some((index, open_kind)) if open_kind == kind => index,
            _ => {
                parts.extend(self.close());
                let index = self.take_index();
                self.open = Some((index, kind));
                parts.push(StreamPart::BlockStart { index, kind });
                index
            }
        };
        parts.push(StreamPart::BlockDelta { index, delta: text });
        parts
    }

    /// Closes the open block, if any.
    pub(crate) fn close(&mut self) -> Option<StreamPart> {
        self.open
            .take()
            .map(|(index, _)| StreamPart::BlockEnd { index })
    }

    /// Closes the open block and reserves the next index for a tool call.
    pub(crate) fn tool_call(&mut self) -> (Option<StreamPart>, u32) {
        let closed = self.close();
        (closed, self.take_index())
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
    use crate::contract::StreamPart::{BlockDelta, BlockEnd, BlockStart};

    #[test]
    fn kinds_alternate_into_closed_blocks_with_rising_indexes() {
        let mut writer = BlockWriter::default();
        let mut parts = writer.delta(BlockKind::Reasoning, "a".into());
        parts.extend(writer.delta(BlockKind::Reasoning, "b".into()));
        parts.extend(writer.delta(BlockKind::Text, "c".into()));
        let (closed, call_index) = writer.tool_call();
        parts.extend(closed);
        assert_eq!(
            parts,
            vec![
                BlockStart {
                    index: 0,
                    kind: BlockKind::Reasoning
                },
                BlockDelta {
                    index: 0,
                    delta: "a".into()
                },
                BlockDelta {
                    index: 0,
                    delta: "b".into()
                },
                BlockEnd { index: 0 },
                BlockStart {
                    index: 1,
                    kind: BlockKind::Text
                },
                BlockDelta {
                    index: 1,
                    delta: "c".into()
                },
                BlockEnd { index: 1 },
            ]
        );
        assert_eq!(call_index, 2);
        assert_eq!(writer.close(), None);
        assert_eq!(
            writer.delta(BlockKind::Text, "d".into())[0],
            BlockStart {
                index: 3,
                kind: BlockKind::Text
            }
        );
    }
}
