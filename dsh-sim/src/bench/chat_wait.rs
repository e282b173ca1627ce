//! The wait a DSH user feels at each message of a chat: from DSH's `stream` call to the
//! first text delta, on a fake as slow as 1.3.0 at setting a session up (its recorded
//! latencies divided by [`ChatWaitSettings::scale`], a tenth by default), with a person's
//! pause between messages. Against the fake's own prompt latency, the part no adapter can
//! hide: the rest is the session's set-up (`session/new`, the model's selection) that a
//! session prepared while the user reads could take off the path (issue 38, B09).
//!
//! Five chats of [`ChatWaitSettings::messages`] messages each (the changing one at least 4), on one provider apiece (the
//! first message starts its process, the later ones find it pooled):
//! - steady: text turns, the same tools and model every message, after the long pause;
//! - the same with a tool round in every message (the wait is the first generation's);
//! - the same steady chat after a short pause, and with none;
//! - a chat whose catalogue changes at message 3 and whose model changes at message 4.

use std::time::{Duration, Instant};

use antigravity_acp::ConfinementMode;
use antigravity_acp::contract::{
    ContentBlock, FinishReason, GenerateOptions, LlmAdapter, Message, Role, StreamChunk,
};
use antigravity_acp::{ADAPTER_ID, AntigravityProvider};
use anyhow::bail;
use futures::StreamExt;
use serde_json::{Value, json};

use super::growth::catalogue;
use super::harness::{Bench, chat, drain, echo_tool, expect_finish};
use crate::host::assemble::echoed_round;

/// 1.3.0's recorded latencies, in ms (docs/antigravity-1.3.0.md §2): `initialize` warm
/// on Linux 1.2–1.4 s (8.0–8.6 s on Windows), `session/new` 4.4–5.3 s, model selection
/// about 2.8 s; the prompt's own latency before its first chunk is taken as 1 s.
const INITIALIZE_MS: u64 = 8_500;
const SESSION_NEW_MS: u64 = 4_800;
const SET_CONFIG_OPTION_MS: u64 = 2_800;
const PROMPT_MS: u64 = 1_000;

/// The model the chats name: not the fake's default, so a session must select it.
const MODEL: &str = "gemini-3.8-flash-low";
/// The model the changing chat switches to at message 4.
const OTHER_MODEL: &str = "gemini-3.7-flash-low";

/// How the chats are run.
#[derive(Debug, Clone)]
pub struct ChatWaitSettings {
    /// Messages per chat (the published figures: 5).
    pub messages: usize,
    /// 1.3.0's latencies are divided by this (10: a tenth).
    pub scale: u64,
    /// A person's pause between messages (1.5 s at a tenth: longer than the set-up).
    pub pause: Duration,
    /// The short pause (0.2 s at a tenth: shorter than the set-up).
    pub short_pause: Duration,
}

impl Default for ChatWaitSettings {
    fn default() -> Self {
        Self {
            messages: 5,
            scale: 10,
            pause: Duration::from_millis(1_500),
            short_pause: Duration::from_millis(200),
        }
    }
}

impl ChatWaitSettings {
    /// The fake's prompt latency: the floor of every wait.
    pub fn prompt_latency(&self) -> Duration {
        Duration::from_millis(PROMPT_MS / self.scale.max(1))
    }
}

/// One repetition's figures, in ms.
#[derive(Debug, Clone, Default)]
pub struct ChatWaits {
    /// The steady chat's first message (it starts the process).
    pub first: f64,
    /// The steady chat's later messages, median.
    pub steady: f64,
    /// The chat with a tool round per message, later messages, median.
    pub tool_round: f64,
    /// The steady chat after the short pause, later messages, median.
    pub short_pause: f64,
    /// The steady chat with no pause, later messages, median.
    pub no_pause: f64,
    /// The changing chat's message 3 (a new catalogue).
    pub tools_changed: f64,
    /// The changing chat's message 4 (a new model).
    pub model_changed: f64,
}

/// What each message's generation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Text,
    ToolRound,
}

fn script(settings: &ChatWaitSettings, shape: Shape) -> Value {
    let scale = settings.scale.max(1);
    let steps = match shape {
        Shape::Text => json!([{"text": "ok"}]),
        Shape::ToolRound => json!([
            {"text": "checking"},
            {"call": {"tool": "echo", "args": {"n": 1}}},
            {"text": "done"}
        ]),
    };
    json!({
        "latency_ms": {
            "initialize": INITIALIZE_MS / scale,
            "session_new": SESSION_NEW_MS / scale,
            "set_config_option": SET_CONFIG_OPTION_MS / scale,
            "prompt": PROMPT_MS / scale,
        },
        "turns": [{"steps": steps}],
    })
}

/// One repetition: the five chats.
pub async fn chat_waits(bench: &Bench, settings: &ChatWaitSettings) -> anyhow::Result<ChatWaits> {
    let steady = one_chat(bench, settings, Shape::Text, settings.pause, false).await?;
    let tool_round = one_chat(bench, settings, Shape::ToolRound, settings.pause, false).await?;
    let short = one_chat(bench, settings, Shape::Text, settings.short_pause, false).await?;
    let none = one_chat(bench, settings, Shape::Text, Duration::ZERO, false).await?;
    let changing = one_chat(bench, settings, Shape::Text, settings.pause, true).await?;
    let at = |waits: &[f64], message: usize| waits.get(message - 1).copied().unwrap_or(f64::NAN);
    Ok(ChatWaits {
        first: at(&steady, 1),
        steady: later_median(&steady),
        tool_round: later_median(&tool_round),
        short_pause: later_median(&short),
        no_pause: later_median(&none),
        tools_changed: at(&changing, 3),
        model_changed: at(&changing, 4),
    })
}

/// The median of messages 2 onwards.
fn later_median(waits: &[f64]) -> f64 {
    let mut later: Vec<f64> = waits.iter().skip(1).copied().collect();
    later.sort_by(f64::total_cmp);
    match later.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => later[n / 2],
        n => (later[n / 2 - 1] + later[n / 2]) / 2.0,
    }
}

/// One chat on a provider of its own: each message's wait to its first text delta, in ms.
/// `changing`: the catalogue grows at message 3 and the model changes at message 4.
async fn one_chat(
    bench: &Bench,
    settings: &ChatWaitSettings,
    shape: Shape,
    pause: Duration,
    changing: bool,
) -> anyhow::Result<Vec<f64>> {
    let provider = bench.provider(&script(settings, shape), ConfinementMode::Off, |_| {})?;
    // The changing chat reaches its message 4 whatever the chats' length.
    let count = if changing {
        settings.messages.max(4)
    } else {
        settings.messages
    };
    let waited = messages(&provider, count, shape, pause, changing).await;
    provider.dispose().await;
    waited
}

async fn messages(
    provider: &AntigravityProvider,
    count: usize,
    shape: Shape,
    pause: Duration,
    changing: bool,
) -> anyhow::Result<Vec<f64>> {
    let mut history: Vec<Message> = Vec::new();
    let mut waits = Vec::with_capacity(count);
    for message in 1..=count {
        if message > 1 {
            // A person reading the answer and typing the next message.
            tokio::time::sleep(pause).await;
        }
        let (tools, model) = match (changing, message) {
            (true, 3) => (catalogue(2), MODEL),
            (true, 4..) => (catalogue(2), OTHER_MODEL),
            _ => (vec![echo_tool()], MODEL),
        };
        history.push(Message::user(format!("message {message}")));
        let mut request = request(&history, tools, model);
        let started = Instant::now();
        let mut stream = provider.stream(request.clone());
        let mut parts = Vec::new();
        let mut first_text = None;
        while let Some(part) = stream.next().await {
            if first_text.is_none() && matches!(part, StreamChunk::TextDelta { .. }) {
                first_text = Some(started.elapsed());
            }
            parts.push(part);
        }
        let Some(wait) = first_text else {
            bail!("message {message} streamed no text: {:?}", parts.last());
        };
        waits.push(wait.as_secs_f64() * 1000.0);
        if shape == Shape::ToolRound {
            let full_model = format!("{ADAPTER_ID}/{}", request.model);
            let round = echoed_round(format!("chat-{message}"), &parts, &full_model);
            if round.len() < 2 {
                bail!("message {message} made no tool call: {:?}", parts.last());
            }
            request.messages.extend(round);
            parts = drain(provider.stream(request.clone())).await;
        }
        expect_finish(&parts, FinishReason::Stop)?;
        history = request.messages;
        history.push(Message::new(
            Role::Assistant,
            vec![ContentBlock::text(answer_text(&parts))],
        ));
    }
    Ok(waits)
}

/// DSH's request for the chat so far.
fn request(
    history: &[Message],
    tools: Vec<antigravity_acp::contract::ToolSchema>,
    model: &str,
) -> GenerateOptions {
    let mut request = chat("", tools);
    model.clone_into(&mut request.model);
    request.messages = history.to_vec();
    request
}

/// The text a generation streamed.
fn answer_text(parts: &[StreamChunk]) -> String {
    parts
        .iter()
        .filter_map(|part| match part {
            StreamChunk::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
