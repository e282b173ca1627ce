//! The ACP prompt of a fresh turn, rebuilt from DSH's complete history: instructions that
//! confine the server to DSH's tools, DSH's system prompt, then the conversation as a
//! transcript. Image blocks travel as ACP image blocks, with the bytes DSH's attachment
//! store gave the host glue; a block the server cannot receive fails explicitly (C72).
//! No line of it begins with a server slash command ([`super::slash_guard`]).

use agent_client_protocol::v1::schema::{ContentBlock as AcpBlock, ImageContent, TextContent};

use super::slash_guard::{ESCAPE_NOTE, escape_slash_commands};
use crate::bridge::{BRIDGE_SERVER_NAME, ToolCatalog};
use crate::contract::{ContentBlock, GenerateOptions, ImageBlock, Message, Purpose, Role};
use crate::error::AdapterError;

/// Image types the server's prompt accepts.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Appends one formatted line (writing into a `String` cannot fail).
fn push_line(text: &mut String, line: std::fmt::Arguments<'_>) {
    text.push_str(&line.to_string());
    text.push('\n');
}

fn instructions(catalog: Option<&ToolCatalog>, purpose: Option<Purpose>) -> String {
    let mut text = String::from(
        "[DSH adapter instructions]\n\
         You are the language model behind DSH, an agent host. DSH owns the workspace, \
         the tools and their permissions.\n\
         - Do not use any built-in tool of your own (files, commands, web, browser, \
         subagents, planning artifacts): they are disabled here and will be refused.\n\
         - Your working directory is an empty scratch directory, not the user's workspace.\n",
    );
    text.push_str(ESCAPE_NOTE);
    match catalog.filter(|c| !c.is_empty()) {
        Some(catalog) => {
            push_line(
                &mut text,
                format_args!(
                    "- Act only through the tools of the MCP server \"{BRIDGE_SERVER_NAME}\". \
                 DSH runs each call under its own permissions and returns the result; \
                 a denied call comes back as an error. Its tools:"
                ),
            );
            for tool in catalog.tools() {
                push_line(
                    &mut text,
                    format_args!(
                        "  - `{}` is DSH's tool \"{}\"",
                        tool.mcp_name, tool.original
                    ),
                );
            }
        }
        None => text.push_str("- No tools are available for this request: answer in text.\n"),
    }
    match purpose {
        None => {}
        Some(Purpose::SessionTitle) => {
            text.push_str("- This request asks for a title for the conversation.\n")
        }
        Some(Purpose::Compaction) => {
            text.push_str("- This request asks for a summary that replaces older history.\n")
        }
    }
    text
}

/// Builds the prompt blocks of a fresh turn.
pub(crate) fn build_prompt(
    request: &GenerateOptions,
    catalog: Option<&ToolCatalog>,
) -> Result<Vec<AcpBlock>, AdapterError> {
    let mut text = instructions(catalog, request.purpose);
    // The transcript is written once into a string of about its final size.
    text.reserve(request.system().len() + request.messages.iter().map(text_size).sum::<usize>());
    let mut prompt = Prompt {
        text,
        images: Vec::new(),
        request,
    };
    if !request.system().is_empty() {
        prompt.text.push_str("\n[System prompt]\n");
        prompt.text.push_str(request.system());
        prompt.text.push('\n');
    }
    prompt.text.push_str("\n[Conversation]\n");
    for message in &request.messages {
        prompt.message(message)?;
    }
    prompt
        .text
        .push_str("\n[End of conversation]\nContinue as the assistant.\n");
    let text = escape_slash_commands(prompt.text);
    let mut blocks = vec![AcpBlock::Text(TextContent::new(text))];
    blocks.extend(prompt.images);
    Ok(blocks)
}

/// About how many bytes `message` adds to the transcript: its texts and arguments, and a
/// little for each heading.
fn text_size(message: &Message) -> usize {
    fn of(block: &ContentBlock) -> usize {
        64 + match block {
            ContentBlock::Text(t) => t.text.len(),
            ContentBlock::Reasoning(r) => r.text.len(),
            ContentBlock::ToolCall(call) => call.arguments.len(),
            ContentBlock::ToolResult(result) => result.content.iter().map(of).sum(),
            ContentBlock::Image(_) | ContentBlock::Other(_) => 0,
        }
    }
    message.content.iter().map(of).sum()
}

/// The prompt being written: its transcript text and the images it attaches.
struct Prompt<'a> {
    text: String,
    images: Vec<AcpBlock>,
    request: &'a GenerateOptions,
}

impl Prompt<'_> {
    /// One message: its tool results first (each under its own heading), then whatever
    /// else it says under its role's heading, so a user message that holds a result and
    /// a question loses neither.
    fn message(&mut self, message: &Message) -> Result<(), AdapterError> {
        for result in message.tool_results() {
            let status = if result.is_error { "error" } else { "ok" };
            push_line(
                &mut self.text,
                format_args!("\n### tool result {} ({status})", result.call_id),
            );
            self.blocks(result.content)?;
        }
        if message.role == Role::Tool {
            return Ok(());
        }
        let rest = || {
            message
                .content
                .iter()
                .filter(|block| !matches!(block, ContentBlock::ToolResult(_)))
        };
        if rest().next().is_none() && !message.content.is_empty() {
            return Ok(());
        }
        let role = match message.role {
            Role::System => "system",
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
        };
        push_line(&mut self.text, format_args!("\n### {role}"));
        self.blocks(rest())
    }

    fn blocks<'b>(
        &mut self,
        blocks: impl IntoIterator<Item = &'b ContentBlock>,
    ) -> Result<(), AdapterError> {
        for block in blocks {
            match block {
                ContentBlock::Text(t) => push_line(&mut self.text, format_args!("{}", t.text)),
                ContentBlock::Reasoning(r) => {
                    push_line(&mut self.text, format_args!("(reasoning) {}", r.text))
                }
                ContentBlock::ToolCall(call) => push_line(
                    &mut self.text,
                    format_args!("(tool call {}: {} {})", call.id, call.name, call.arguments),
                ),
                ContentBlock::Image(image) => self.image(image)?,
                ContentBlock::ToolResult(result) => {
                    push_line(
                        &mut self.text,
                        format_args!("(tool result {})", result.tool_call_id),
                    );
                    self.blocks(&result.content)?;
                }
                ContentBlock::Other(_) => {
                    return Err(AdapterError::UnsupportedInput(format!(
                        "a `{}` block cannot be sent to the server",
                        block.type_name()
                    )));
                }
            }
        }
        Ok(())
    }

    fn image(&mut self, image: &ImageBlock) -> Result<(), AdapterError> {
        let id = &image.attachment.attachment_id;
        let Some(bytes) = self.request.images.get(id) else {
            return Err(AdapterError::AttachmentUnavailable(id.clone()));
        };
        if !IMAGE_TYPES.contains(&bytes.media_type.as_str()) {
            return Err(AdapterError::UnsupportedInput(format!(
                "an image of type {} cannot be sent to the server",
                bytes.media_type
            )));
        }
        self.images.push(AcpBlock::Image(ImageContent::new(
            bytes.data_base64.clone(),
            bytes.media_type.clone(),
        )));
        push_line(
            &mut self.text,
            format_args!("(attached image {})", self.images.len()),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::{ImageAttachmentRef, ResolvedImage, ToolCallBlock, ToolSchema};

    fn request(messages: Vec<Message>, tools: Vec<ToolSchema>) -> GenerateOptions {
        let mut request = GenerateOptions::new("antigravity-acp", "server-default", messages);
        request.system = Some("Be brief.".into());
        request.tools = Some(tools);
        request
    }

    #[test]
    fn the_whole_history_and_the_tool_map_are_in_the_prompt() -> crate::TestResult {
        let tools = vec![ToolSchema {
            name: "read_file".into(),
            description: "Reads".into(),
            parameters: json!({"type": "object"}),
        }];
        let catalog = ToolCatalog::build(&tools)?;
        let history = vec![
            Message::user("first question"),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolCall(ToolCallBlock {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                })],
            ),
            Message::tool_result("call_1", vec![ContentBlock::text("contents")], false),
            Message::user("second question"),
        ];
        let blocks = build_prompt(&request(history, tools), Some(&catalog))?;
        let AcpBlock::Text(text) = &blocks[0] else {
            panic!("not text")
        };
        let text = &text.text;
        for needle in [
            "Be brief.",
            "first question",
            "call_1",
            r#"{"path":"a"}"#,
            "contents",
            "second question",
            "\"dsh\"",
        ] {
            assert!(text.contains(needle), "missing {needle}");
        }
        assert!(text.find("first question") < text.find("second question"));
        Ok(())
    }

    fn image(media: &str) -> GenerateOptions {
        let attachment = ImageAttachmentRef {
            attachment_id: "att_1".into(),
            media_type: media.into(),
            bytes: 3,
            width: 1,
            height: 1,
            name: None,
        };
        let message = Message::new(
            Role::User,
            vec![ContentBlock::Image(ImageBlock { attachment })],
        );
        let mut request = request(vec![message], vec![]);
        request.images.insert(
            "att_1".into(),
            ResolvedImage {
                media_type: media.into(),
                data_base64: "AAAA".into(),
            },
        );
        request
    }

    #[test]
    fn images_travel_as_image_blocks() -> crate::TestResult {
        let blocks = build_prompt(&image("image/png"), None)?;
        assert!(matches!(blocks[1], AcpBlock::Image(_)));
        Ok(())
    }

    #[test]
    fn other_media_fail_as_unsupported_input() -> crate::TestResult {
        let error = build_prompt(&image("image/svg+xml"), None)
            .err()
            .ok_or("an SVG was projected")?;
        assert!(matches!(error, AdapterError::UnsupportedInput(_)));
        Ok(())
    }

    /// A user message holding a tool result and more (text, an image) keeps both: the
    /// result under its heading, the rest under the user's.
    #[test]
    fn a_message_with_a_result_and_a_question_keeps_both() -> crate::TestResult {
        let mut mixed = Message::tool_result("call_9", vec![ContentBlock::text("42")], false);
        mixed
            .content
            .push(ContentBlock::text("and what does it mean?"));
        let blocks = build_prompt(&request(vec![mixed], vec![]), None)?;
        let AcpBlock::Text(text) = &blocks[0] else {
            return Err("not text".into());
        };
        let result = text
            .text
            .find("### tool result call_9 (ok)\n42")
            .ok_or("no result")?;
        let question = text
            .text
            .find("### user\nand what does it mean?")
            .ok_or("the question was dropped")?;
        assert!(result < question);
        Ok(())
    }

    /// An image whose bytes the host did not resolve fails with its own code; so does a
    /// block type the server cannot receive.
    #[test]
    fn unresolved_images_and_unknown_blocks_fail_explicitly() -> crate::TestResult {
        let mut unresolved = image("image/png");
        unresolved.images.clear();
        let error = build_prompt(&unresolved, None)
            .err()
            .ok_or("no bytes, no error")?;
        assert!(matches!(error, AdapterError::AttachmentUnavailable(id) if id == "att_1"));
        let other = Message::new(
            Role::User,
            vec![ContentBlock::Other(json!({"type": "audio", "data": "x"}))],
        );
        let error = build_prompt(&request(vec![other], vec![]), None)
            .err()
            .ok_or("an audio block was projected")?;
        assert!(matches!(error, AdapterError::UnsupportedInput(m) if m.contains("audio")));
        Ok(())
    }
}
