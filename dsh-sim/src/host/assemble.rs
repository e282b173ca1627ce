//! DSH's `BlockAssembler` in miniature: the blocks a chunk stream assembles into, in the
//! order their indexes were first seen (a `block-end`'s block replaces what its deltas
//! built), and the assistant message DSH stores from them. `interrupted` keeps what an
//! interrupted stream can finalize: text and reasoning with non-whitespace content, no tool
//! calls.

use std::collections::BTreeMap;

use antigravity_acp::contract::{
    ContentBlock, ContentBlockType, Message, Role, StreamChunk, TextBlock, ToolCallBlock,
};

/// A block being assembled.
#[derive(Debug)]
struct Partial {
    block_type: ContentBlockType,
    text: String,
    id: String,
    name: String,
    done: Option<ContentBlock>,
}

impl Partial {
    fn block(self) -> ContentBlock {
        if let Some(done) = self.done {
            return done;
        }
        match self.block_type {
            ContentBlockType::Reasoning => ContentBlock::Reasoning(TextBlock { text: self.text }),
            ContentBlockType::ToolCall => ContentBlock::ToolCall(ToolCallBlock {
                id: self.id,
                name: self.name,
                arguments: self.text,
            }),
            _ => ContentBlock::Text(TextBlock { text: self.text }),
        }
    }
}

/// The partial at `index`, made (and its index recorded as seen) on first sight.
fn ensure<'a>(
    order: &mut Vec<u32>,
    partials: &'a mut BTreeMap<u32, Partial>,
    index: u32,
    block_type: ContentBlockType,
) -> &'a mut Partial {
    partials.entry(index).or_insert_with(|| {
        order.push(index);
        Partial {
            block_type,
            text: String::new(),
            id: String::new(),
            name: String::new(),
            done: None,
        }
    })
}

/// The blocks `chunks` assemble into, in first-seen order.
pub fn assemble(chunks: &[StreamChunk]) -> Vec<ContentBlock> {
    let mut order: Vec<u32> = Vec::new();
    let mut partials: BTreeMap<u32, Partial> = BTreeMap::new();
    for chunk in chunks {
        let (o, p) = (&mut order, &mut partials);
        match chunk {
            StreamChunk::BlockStart { index, block_type } => {
                ensure(o, p, *index, *block_type);
            }
            StreamChunk::TextDelta { index, text } => ensure(o, p, *index, ContentBlockType::Text)
                .text
                .push_str(text),
            StreamChunk::ReasoningDelta { index, text } => {
                ensure(o, p, *index, ContentBlockType::Reasoning)
                    .text
                    .push_str(text)
            }
            StreamChunk::ToolCallDelta {
                index,
                id,
                name,
                arguments_delta,
            } => {
                let partial = ensure(o, p, *index, ContentBlockType::ToolCall);
                partial.id.clone_from(id);
                if let Some(name) = name {
                    partial.name.clone_from(name);
                }
                partial.text.push_str(arguments_delta);
            }
            StreamChunk::BlockEnd { index, block } => {
                ensure(o, p, *index, ContentBlockType::Text).done = Some(block.clone());
            }
            StreamChunk::Usage { .. } | StreamChunk::Finish { .. } => {}
        }
    }
    order
        .into_iter()
        .filter_map(|index| partials.remove(&index))
        .map(Partial::block)
        .collect()
}

/// What an interrupted stream leaves: its text and reasoning blocks with content.
pub fn interrupted(chunks: &[StreamChunk]) -> Vec<ContentBlock> {
    assemble(chunks)
        .into_iter()
        .filter(|block| match block {
            ContentBlock::Text(b) | ContentBlock::Reasoning(b) => !b.text.trim().is_empty(),
            _ => false,
        })
        .collect()
}

/// The assistant message DSH stores for `blocks`, produced by `provider/model`.
pub fn assistant_message(id: String, blocks: Vec<ContentBlock>, model: &str) -> Message {
    let (provider, model) = model.split_once('/').unwrap_or((model, ""));
    let mut message = Message::new(Role::Assistant, blocks);
    message.id = Some(id);
    message.source = serde_json::json!({"kind": "model", "provider": provider, "model": model});
    message
}

/// A tool round answered with each call's own arguments (nothing is run): the assistant
/// message `chunks` assemble into, then one tool-result message per call, its text the
/// call's JSON arguments. For `dsh-sim ask` and the benchmarks, which run no tool.
pub fn echoed_round(id: String, chunks: &[StreamChunk], model: &str) -> Vec<Message> {
    let assistant = assistant_message(id, assemble(chunks), model);
    let results: Vec<Message> = assistant
        .tool_calls()
        .map(|call| {
            let text = ContentBlock::Text(TextBlock {
                text: call.arguments.clone(),
            });
            Message::tool_result(&call.id, vec![text], false)
        })
        .collect();
    std::iter::once(assistant).chain(results).collect()
}
