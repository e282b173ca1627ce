//! A chat as it grows: one conversation on a pooled process whose history grows by 2 KB a
//! round (a 1 KB user message and a 1 KB assistant answer), generated again every round,
//! so that each generation's prompt is rebuilt from the whole history. Each generation's
//! time and the process's resident set are read against the history's size; the slope of
//! time over size (least squares over every generation) is what a long chat costs per KB.
//! The same chat with a catalogue of 256 tools is the second axis.

use std::time::Instant;

use antigravity_acp::ConfinementMode;
use antigravity_acp::contract::{
    ContentBlock, FinishReason, LlmAdapter, Message, Role, ToolSchema,
};
use serde_json::json;

use super::harness::{Bench, chat, drain, echo_tool, expect_finish, memory_kib};

/// What each round adds to the history, in bytes: a user message and an answer, 1 KB each.
pub const ROUND_BYTES: usize = 2048;

/// The generations whose figures are published.
pub const MARKS: [usize; 4] = [1, 10, 100, 300];

/// One chat's figures.
#[derive(Debug, Clone, Default)]
pub struct Growth {
    /// Each generation's history in KB and its time in ms.
    pub points: Vec<(f64, f64)>,
    /// Each generation's resident set, in MB.
    pub rss_mb: Vec<f64>,
}

impl Growth {
    /// Generation `n`'s (1-based) time in ms.
    pub fn time_at(&self, n: usize) -> Option<f64> {
        self.points.get(n.checked_sub(1)?).map(|&(_, ms)| ms)
    }

    /// Generation `n`'s (1-based) resident set in MB.
    pub fn rss_at(&self, n: usize) -> Option<f64> {
        self.rss_mb.get(n.checked_sub(1)?).copied()
    }

    /// The least-squares slope of time over history, in µs per KB.
    pub fn slope_us_per_kb(&self) -> f64 {
        let n = self.points.len() as f64;
        if n < 2.0 {
            return 0.0;
        }
        let (sx, sy) = self
            .points
            .iter()
            .fold((0.0, 0.0), |(sx, sy), &(x, y)| (sx + x, sy + y));
        let (mx, my) = (sx / n, sy / n);
        let (cov, var) = self.points.iter().fold((0.0, 0.0), |(c, v), &(x, y)| {
            (c + (x - mx) * (y - my), v + (x - mx) * (x - mx))
        });
        if var == 0.0 { 0.0 } else { cov / var * 1000.0 }
    }
}

/// `tools` tools like the echo tool, each named apart, with a description of its own.
pub fn catalogue(tools: usize) -> Vec<ToolSchema> {
    (0..tools)
        .map(|i| {
            let mut tool = echo_tool();
            if i > 0 {
                tool.name = format!("tool_{i:03}");
                tool.description =
                    format!("Tool number {i} of the catalogue; echoes its arguments.");
                tool.parameters = json!({"type": "object", "properties": {
                    "n": {"type": "integer", "description": "a number"},
                    "label": {"type": "string", "description": "a label"}}});
            }
            tool
        })
        .collect()
}

/// A message of exactly `bytes` ASCII characters, different for every `round`.
fn filler(round: usize, bytes: usize) -> String {
    let head = format!("round {round}: ");
    let mut text = head.clone();
    text.extend(std::iter::repeat_n('x', bytes.saturating_sub(head.len())));
    text
}

/// `generations` generations of one chat with `tools` offered, on a process of its own
/// kept in the pool (one untimed turn first).
pub async fn grow_chat(bench: &Bench, generations: usize, tools: usize) -> anyhow::Result<Growth> {
    let script = json!({"turns": [{"steps": [{"text": "ok"}]}]});
    let provider = bench.provider(&script, ConfinementMode::Off, |_| {})?;
    let offered = catalogue(tools);
    let warm = drain(provider.stream(chat("warm up", offered.clone()))).await;
    expect_finish(&warm, FinishReason::Stop)?;
    let mut request = chat(&filler(0, ROUND_BYTES / 2), offered);
    let mut growth = Growth::default();
    for generation in 1..=generations {
        if generation > 1 {
            request.messages.extend([
                Message::new(
                    Role::Assistant,
                    vec![ContentBlock::text(filler(generation, ROUND_BYTES / 2))],
                ),
                Message::user(filler(generation, ROUND_BYTES / 2)),
            ]);
        }
        let next = request.clone();
        let started = Instant::now();
        let parts = drain(provider.stream(next)).await;
        let elapsed = started.elapsed();
        if let Err(error) = expect_finish(&parts, FinishReason::Stop) {
            provider.dispose().await;
            return Err(error);
        }
        let history_kb = (generation * ROUND_BYTES) as f64 / 1024.0;
        growth
            .points
            .push((history_kb, elapsed.as_secs_f64() * 1000.0));
        let rss = memory_kib("VmRSS:").unwrap_or_default();
        growth.rss_mb.push(rss as f64 / 1024.0);
    }
    provider.dispose().await;
    Ok(growth)
}
