//! The ACP prompt of a fresh turn, rebuilt from DSH's complete history: instructions that
//! confine the server to DSH's tools, DSH's system prompt, then the conversation as a
//! transcript. Images travel as ACP image blocks; other binary input cannot be projected
//! and fails explicitly.

use agent_client_protocol::v1::schema::{ContentBlock, ImageContent, TextContent};
use serde_json::Value;

use crate::bridge::{BRIDGE_SERVER_NAME, ToolCatalog};
use crate::contract::{AssistantPart, GenerateRequest, Message, Purpose, UserPart};
use crate::error::AdapterError;

/// Image types the server's prompt accepts.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Renders a tool result's output as the text the model reads.
pub(crate) fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Appends one formatted line (writing into a `String` cannot fail).
fn push_line(text: &mut String, line: std::fmt::Arguments<'_>) {
    text.push_str(&line.to_string());
    text.push('\n');
}

fn instructions(catalog: Option<&ToolCatalog>, purpose: Purpose) -> String {
    let mut text = String::from(
        "[DSH adapter instructions]\n\
         You are the language model behind DSH, an agent host. DSH owns the workspace, \
         the tools and their permissions.\n\
         - Do not use any built-in tool of your own (files, commands, web, browser, \
         subagents, planning artifacts): they are disabled here and will be refused.\n\
         - Your working directory is an empty scratch directory, not the user's workspace.\n",
    );
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
        Purpose::Chat => {}
        Purpose::Title => text.push_str("- This request asks for a title for the conversation.\n"),
        Purpose::Compaction => {
            text.push_str("- This request asks for a summary that replaces older history.\n")
        }
    }
    text
}

/// Builds the prompt blocks of a fresh turn.
pub(crate) fn build_prompt(
    request: &GenerateRequest,
    catalog: Option<&ToolCatalog>,
) -> Result<Vec<ContentBlock>, AdapterError> {
    let mut text = instructions(catalog, request.purpose);
    let mut images = Vec::new();
    if !request.system.is_empty() {
        text.push_str("\n[System prompt]\n");
        text.push_str(&request.system);
        text.push('\n');
    }
    text.push_str("\n[Conversation]\n");
    for message in &request.history {
        render(message, &mut text, &mut images)?;
    }
    text.push_str("\n[End of conversation]\nContinue as the assistant.\n");
    let mut blocks = vec![ContentBlock::Text(TextContent::new(text))];
    blocks.extend(images);
    Ok(blocks)
}

fn render(
    message: &Message,
    text: &mut String,
    images: &mut Vec<ContentBlock>,
) -> Result<(), AdapterError> {
    match message {
        Message::User(parts) => {
            text.push_str("\n### user\n");
            for part in parts {
                match part {
                    UserPart::Text(t) => {
                        text.push_str(t);
                        text.push('\n');
                    }
                    UserPart::Binary(binary) => {
                        if !IMAGE_TYPES.contains(&binary.media_type.as_str()) {
                            return Err(AdapterError::UnsupportedInput(format!(
                                "binary input of type {} cannot be sent to the server",
                                binary.media_type
                            )));
                        }
                        images.push(ContentBlock::Image(ImageContent::new(
                            binary.data_base64.clone(),
                            binary.media_type.clone(),
                        )));
                        push_line(text, format_args!("(attached image {})", images.len()));
                    }
                }
            }
        }
        Message::Assistant(parts) => {
            text.push_str("\n### assistant\n");
            for part in parts {
                match part {
                    AssistantPart::Text(t) => {
                        text.push_str(t);
                        text.push('\n');
                    }
                    AssistantPart::Reasoning(r) => {
                        push_line(text, format_args!("(reasoning) {r}"));
                    }
                    AssistantPart::ToolCall(call) => {
                        push_line(
                            text,
                            format_args!(
                                "(tool call {}: {} {})",
                                call.call_id, call.tool_name, call.arguments
                            ),
                        );
                    }
                }
            }
        }
        Message::Tool(results) => {
            for result in results {
                let status = if result.is_error { "error" } else { "ok" };
                push_line(
                    text,
                    format_args!(
                        "\n### tool result {} ({}, {status})\n{}",
                        result.call_id,
                        result.tool_name,
                        output_text(&result.output)
                    ),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::{BinaryPart, ToolCallPart, ToolDefinition, ToolResult};

    fn request(history: Vec<Message>, tools: Vec<ToolDefinition>) -> GenerateRequest {
        let mut request =
            GenerateRequest::chat("antigravity-acp/server-default", "Be brief.", history);
        request.tools = tools;
        request
    }

    #[test]
    fn the_whole_history_and_the_tool_map_are_in_the_prompt() -> crate::TestResult {
        let tools = vec![ToolDefinition {
            name: "read_file".into(),
            description: "Reads".into(),
            input_schema: json!({"type": "object"}),
        }];
        let catalog = ToolCatalog::build(&tools)?;
        let history = vec![
            Message::User(vec![UserPart::Text("first question".into())]),
            Message::Assistant(vec![AssistantPart::ToolCall(ToolCallPart {
                call_id: "call_1".into(),
                tool_name: "read_file".into(),
                arguments: json!({"path": "a"}),
            })]),
            Message::Tool(vec![ToolResult {
                call_id: "call_1".into(),
                tool_name: "read_file".into(),
                output: json!("contents"),
                is_error: false,
            }]),
            Message::User(vec![UserPart::Text("second question".into())]),
        ];
        let blocks = build_prompt(&request(history, tools), Some(&catalog))?;
        let ContentBlock::Text(text) = &blocks[0] else {
            panic!("not text")
        };
        let text = &text.text;
        for needle in [
            "Be brief.",
            "first question",
            "call_1",
            "contents",
            "second question",
            "\"dsh\"",
        ] {
            assert!(text.contains(needle), "missing {needle}");
        }
        assert!(text.find("first question") < text.find("second question"));
        Ok(())
    }

    fn image(media: &str) -> Message {
        Message::User(vec![UserPart::Binary(BinaryPart {
            media_type: media.into(),
            data_base64: "AAAA".into(),
        })])
    }

    #[test]
    fn images_travel_as_image_blocks() -> crate::TestResult {
        let blocks = build_prompt(&request(vec![image("image/png")], vec![]), None)?;
        assert!(matches!(blocks[1], ContentBlock::Image(_)));
        Ok(())
    }

    #[test]
    fn other_binaries_fail_as_unsupported_input() -> crate::TestResult {
        let error = build_prompt(&request(vec![image("application/pdf")], vec![]), None)
            .err()
            .ok_or("a PDF was projected")?;
        assert!(matches!(error, AdapterError::UnsupportedInput(_)));
        Ok(())
    }
}
