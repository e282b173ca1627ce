//! The repetitions and the rows they become: each repetition measures every benchmark
//! and, right beside it, its floor; each row then holds the per-repetition figures,
//! floors and ratios, with its goal.

use std::time::Duration;

use antigravity_acp::ConfinementMode;
use antigravity_acp::contract::LlmAdapter;

use super::bare_acp::BareClient;
use super::harness::Bench;
use super::mcp_floor::ClientWork;
use super::median::median_ms;
use super::report::{Goal, GoalOp, Row, Spread, ValueKind};
use super::rounds::Connections;
use super::settings::{BenchSettings, PARALLEL_WIDTH};
use super::suite::SuiteFigures;
use super::{chat_wait, first_tool, growth, mcp_floor, memory, rounds, streaming, turns};

/// Why the benchmarks could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The settings cannot be run.
    #[error("{0}")]
    Settings(&'static str),
    /// A benchmark failed (a process, a stream, a file).
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
    /// The workspace could not be made.
    #[error("cannot prepare the benchmark: {0}")]
    Setup(#[from] std::io::Error),
}

/// Every repetition's figures, by series.
#[derive(Default)]
struct Series {
    values: std::collections::BTreeMap<&'static str, Vec<f64>>,
}

impl Series {
    fn push(&mut self, name: &'static str, value: f64) {
        self.values.entry(name).or_default().push(value);
    }

    /// A growing chat's figures under `names` (its slope, its resident set's growth from
    /// the first to the last published generation, and each published generation's time,
    /// in the order of [`growth::MARKS`]).
    fn push_growth(&mut self, names: &GrowthNames, chat: &growth::Growth) {
        self.push(names.slope, chat.slope_us_per_kb());
        for (&mark, &name) in growth::MARKS.iter().zip(&names.marks) {
            if let Some(ms) = chat.time_at(mark) {
                self.push(name, ms);
            }
        }
        let last = growth::MARKS
            .iter()
            .rev()
            .find_map(|&mark| chat.rss_at(mark));
        if let (Some(first), Some(last)) = (chat.rss_at(1), last) {
            self.push(names.rss, last - first);
        }
    }

    fn spread(&self, name: &'static str, what: &str, unit: &str) -> Spread {
        Spread::of(
            what,
            unit,
            self.values.get(name).cloned().unwrap_or_default(),
        )
    }
}

/// The series names of one growing chat.
struct GrowthNames {
    slope: &'static str,
    rss: &'static str,
    marks: [&'static str; growth::MARKS.len()],
}

/// The chat with one tool, and the chat with 256.
const GROWING_CHATS: [(usize, GrowthNames); 2] = [
    (
        1,
        GrowthNames {
            slope: "chat_slope",
            rss: "chat_rss",
            marks: ["chat_1", "chat_10", "chat_100", "chat_300"],
        },
    ),
    (
        256,
        GrowthNames {
            slope: "chat256_slope",
            rss: "chat256_rss",
            marks: ["chat256_1", "chat256_10", "chat256_100", "chat256_300"],
        },
    ),
];

const MS: &str = "ms";
const RATE: &str = "chunks/s";

fn at_most(value: f64) -> Option<Goal> {
    Some(Goal {
        op: GoalOp::AtMost,
        value,
    })
}

/// Measures `settings.repetitions` interleaved repetitions and forms the rows.
pub(super) async fn measure(bench: &Bench, settings: &BenchSettings) -> anyhow::Result<Vec<Row>> {
    let mut series = Series::default();
    // The floors' agent and the streaming peers stay up across repetitions (warm).
    let agent = BareClient::spawn(&bench.program, &["bench-agent"]).await?;
    agent.initialize().await?;
    let mut streams = Vec::new();
    let streamed = settings
        .only
        .as_ref()
        .is_none_or(|only| only.iter().any(|g| g == "streaming"));
    for &chunks in settings.chunks.iter().filter(|_| streamed) {
        let provider = streaming::streaming_provider(bench, chunks).await?;
        let client = streaming::ceiling_client(bench, chunks).await?;
        streaming::ceiling_rate(&client, bench, chunks).await?;
        streams.push((chunks, provider, client));
    }
    let wanted = |group: &str| {
        settings
            .only
            .as_ref()
            .is_none_or(|only| only.iter().any(|g| g == group))
    };
    for repetition in 0..settings.repetitions {
        eprintln!(
            "bench: repetition {} of {}",
            repetition + 1,
            settings.repetitions
        );
        if wanted("floors") || wanted("tool_round") {
            let mut acp = Vec::with_capacity(settings.floor_calls);
            for _ in 0..settings.floor_calls {
                acp.push(agent.round_trip().await?);
            }
            series.push("acp", median_ms(&acp));
            for (name, across, connections) in [
                ("rmcp", "rmcp_across", Connections::Fresh),
                ("rmcp_kept", "rmcp_across_kept", Connections::KeptAlive),
            ] {
                let trips = mcp_floor::rmcp_round_trips(settings.floor_calls, connections).await?;
                series.push(name, median_ms(&trips));
                let trips = mcp_floor::rmcp_from_child(
                    &bench.program,
                    ClientWork::Rounds,
                    settings.floor_calls,
                    1,
                    connections,
                )
                .await?;
                series.push(across, median_ms(&trips));
            }
            series.push(
                "http",
                median_ms(&mcp_floor::raw_http_round_trips(settings.floor_calls).await?),
            );
        }
        if wanted("tool_round") || wanted("parallel_64") {
            let kept =
                rounds::tool_rounds(bench, settings.rounds, 1, Connections::KeptAlive).await?;
            series.push("round", median_ms(&kept));
            let fresh = rounds::tool_rounds(bench, settings.rounds, 1, Connections::Fresh).await?;
            series.push("round_fresh", median_ms(&fresh));
        }
        if wanted("parallel_64") {
            let rmcp = mcp_floor::rmcp_from_child(
                &bench.program,
                ClientWork::Rounds,
                settings.parallel_rounds,
                PARALLEL_WIDTH,
                Connections::KeptAlive,
            )
            .await?;
            series.push("rmcp_64", median_ms(&rmcp));
            series.push(
                "parallel",
                median_ms(
                    &rounds::tool_rounds(
                        bench,
                        settings.parallel_rounds,
                        PARALLEL_WIDTH,
                        Connections::KeptAlive,
                    )
                    .await?,
                ),
            );
        }
        if wanted("warm_vs_cold") {
            series.push(
                "warm",
                median_ms(&turns::warm_turns(bench, settings.turns).await?),
            );
            let slow = turns::SERVER_START_UP;
            series.push(
                "cold_slow",
                median_ms(&turns::cold_turns(bench, 1, slow, ConfinementMode::Off).await?),
            );
        }
        if wanted("first_tool") {
            let streams = first_tool::first_tool_streams(bench, settings.turns).await?;
            series.push("first_tool", median_ms(&streams));
            let acp = median_ms(&first_tool::bare_sessions(bench, settings.turns).await?);
            series.push("bare_session", acp);
            let mcp = mcp_floor::rmcp_from_child(
                &bench.program,
                ClientWork::FirstCalls,
                settings.turns,
                1,
                Connections::Fresh,
            )
            .await?;
            let mcp = median_ms(&mcp);
            series.push("first_tool_floor", acp + mcp);
        }
        if wanted("growth") {
            for (tools, names) in &GROWING_CHATS {
                let chat = growth::grow_chat(bench, settings.generations, *tools).await?;
                series.push_growth(names, &chat);
            }
        }
        if wanted("cold_turn") {
            series.push(
                "spawn_init",
                median_ms(&turns::spawn_to_initialize(bench, settings.cold_turns).await?),
            );
            for (name, mode) in [
                ("cold", ConfinementMode::Off),
                ("cold_confined", ConfinementMode::BestEffort),
            ] {
                let cold =
                    turns::cold_turns(bench, settings.cold_turns, Duration::ZERO, mode).await?;
                series.push(name, median_ms(&cold));
            }
            series.push(
                "spawn_pipe",
                median_ms(&turns::spawn_and_pipe(settings.cold_turns).await?),
            );
        }
        for (chunks, provider, client) in &streams {
            let (adapter, ceiling) = stream_names(*chunks);
            series.push(adapter, streaming::adapter_rate(provider, *chunks).await?);
            series.push(
                ceiling,
                streaming::ceiling_rate(client, bench, *chunks).await?,
            );
        }
        if wanted("chat_wait") {
            let waits = chat_wait::chat_waits(bench, &settings.chat_wait).await?;
            let floor = settings.chat_wait.prompt_latency().as_secs_f64() * 1000.0;
            for (name, value) in [
                ("chat_prompt", floor),
                ("chat_first", waits.first),
                ("chat_steady", waits.steady),
                ("chat_tool_round", waits.tool_round),
                ("chat_short_pause", waits.short_pause),
                ("chat_no_pause", waits.no_pause),
                ("chat_tools_changed", waits.tools_changed),
                ("chat_model_changed", waits.model_changed),
            ] {
                series.push(name, value);
            }
        }
        if wanted("memory") {
            series.push(
                "rss_growth",
                memory::rss_growth(bench, settings.memory_turns).await?,
            );
            series.push(
                "rss_in_flight",
                memory::per_turn_in_flight(bench, settings.in_flight).await?,
            );
        }
    }
    agent.close().await?;
    for (_, provider, client) in streams {
        provider.dispose().await;
        client.close().await?;
    }
    Ok(rows_of(&series, settings)
        .into_iter()
        .filter(|row| {
            !row.figure.values.is_empty() && row.floor.as_ref().is_none_or(|f| !f.values.is_empty())
        })
        .collect())
}

fn stream_names(chunks: usize) -> (&'static str, &'static str) {
    if chunks >= 100_000 {
        ("stream_100k", "ceiling_100k")
    } else {
        ("stream_20k", "ceiling_20k")
    }
}

fn rows_of(series: &Series, settings: &BenchSettings) -> Vec<Row> {
    let floor_sum = |rmcp: &'static str, what: &str| {
        let acp = series.spread("acp", "", MS);
        let rmcp = series.spread(rmcp, "", MS);
        let sum = acp
            .values
            .iter()
            .zip(&rmcp.values)
            .map(|(a, r)| a + r)
            .collect();
        Spread::of(what, MS, sum)
    };
    let kept_floor = floor_sum(
        "rmcp_across_kept",
        "ACP round trip + bare rmcp round trip from another process, connection kept (medians)",
    );
    let fresh_floor = floor_sum(
        "rmcp_across",
        "ACP round trip + bare rmcp round trip from another process, fresh connection (medians)",
    );
    let mut rows = vec![
        Row::compared(
            "tool_round",
            "tool round inside one prompt",
            "DSH's result handed to generate until the next tool call is in DSH's hands: the bridge answers the parked MCP request, the fake announces the next call, asks session/request_permission (answered by the adapter) and posts tools/call to the bridge",
            series.spread("round", "median round", MS),
            kept_floor,
            ValueKind::Ratio,
            at_most(1.5),
        ),
        Row::compared(
            "tool_round_fresh_connections",
            "tool round inside one prompt, a fresh HTTP connection per MCP request",
            "the same round with the fake's MCP client opening a new connection for every request (its default; how the real harness pools is not recorded)",
            series.spread("round_fresh", "median round", MS),
            fresh_floor,
            ValueKind::Ratio,
            at_most(1.5),
        ),
        Row::compared(
            "parallel_64",
            "64 parallel calls in one round vs one call",
            "the same round with a parallel step of 64 calls, until all 64 are in DSH's hands (across as many generations as they arrive in), against the one-call round of the same repetition",
            series.spread("parallel", "median 64-call round", MS),
            series.spread("round", "median one-call round", MS),
            ValueKind::Ratio,
            None,
        ),
        Row::compared(
            "parallel_64_vs_rmcp",
            "64 parallel calls in one round vs 64 concurrent bare rmcp calls",
            "the 64-call round against one bare rmcp client's 64 concurrent tools/call to an rmcp stateless server, until all are answered: what MCP alone costs for 64 calls",
            series.spread("parallel", "median 64-call round", MS),
            series.spread("rmcp_64", "64 concurrent rmcp calls", MS),
            ValueKind::Ratio,
            at_most(1.3),
        ),
        Row::compared(
            "first_tool_stream",
            "the first tool stream of a session vs the same requests from bare SDKs",
            "on a warm pooled process, a fresh chat with a tool offered, from generate to the finish that hands DSH the first call: the bridge bound, session/new with the MCP descriptor (the fake's initialize and tools/list to the bridge), the prompt, the permission round, the first tools/call parked; against a bare SDK client's session/new and prompt to the same fake plus a new rmcp client's initialize, tools/list and tools/call to an rmcp server (medians)",
            series.spread("first_tool", "median first tool stream", MS),
            series.spread(
                "first_tool_floor",
                "bare ACP session/new + prompt, bare rmcp initialize + tools/list + tools/call",
                MS,
            ),
            ValueKind::Ratio,
            at_most(1.5),
        ),
        Row::compared(
            "warm_vs_cold",
            "warm turn on a pooled process vs cold turn",
            "generate (one tool offered) to finish(stop) of a one-chunk text turn on a pooled process, against the same turn on a process of its own whose initialize the fake answers after 1.2 s, as the real server does",
            series.spread("warm", "median warm turn", MS),
            series.spread("cold_slow", "cold turn, 1.2 s start-up", MS),
            ValueKind::Ratio,
            at_most(0.10),
        ),
    ];
    for &chunks in &settings.chunks {
        let (adapter, ceiling) = stream_names(chunks);
        let (id, title) = if chunks >= 100_000 {
            ("streaming_100k", "streaming 100 k chunks")
        } else {
            ("streaming_20k", "streaming 20 k chunks")
        };
        rows.push(Row::compared(
            id,
            title,
            "server message chunks per second, from the first chunk received to the end of the prompt: through the adapter to DSH parts, against a bare SDK client with a counting handler on the same fake and script",
            series.spread(adapter, "through the adapter", RATE),
            series.spread(ceiling, "bare SDK client", RATE),
            ValueKind::Ratio,
            Some(Goal {
                op: GoalOp::AtLeast,
                value: 0.90,
            }),
        ));
    }
    rows.extend([
        Row::compared(
            "cold_turn",
            "cold text turn vs the fake's bare spawn → initialize (unconfined)",
            "generate to finish(stop) of a one-chunk text turn on a process of its own (spawn, initialize, bridge, session/new, prompt, teardown before the finish), no start-up delay, unconfined; against spawning the fake and having initialize answered by a bare SDK client",
            series.spread("cold", "median cold turn", MS),
            series.spread("spawn_init", "spawn → initialize answered", MS),
            ValueKind::Ratio,
            at_most(1.5),
        ),
        Row::compared(
            "cold_turn_confined",
            "cold text turn vs the fake's bare spawn → initialize (confined)",
            "the same cold turn with the server confined by Landlock (best_effort), against the same unconfined floor",
            series.spread("cold_confined", "median confined cold turn", MS),
            series.spread("spawn_init", "spawn → initialize answered", MS),
            ValueKind::Ratio,
            at_most(1.5),
        ),
        Row::reported(
            "rss_growth",
            "RSS growth over 1,000 sequential turns on pooled processes",
            "the DSH + adapter process's resident set after the turns minus before them (50 warm-up turns first)",
            series.spread("rss_growth", "growth", "MB"),
            Some(Goal {
                op: GoalOp::Below,
                value: 5.0,
            }),
        ),
        Row::reported(
            "rss_per_turn_in_flight",
            "resident memory per turn in flight",
            "the DSH + adapter process's resident set with 8 tool turns parked at once (each with its process checked out and its bridge open), minus the same with none, per turn",
            series.spread("rss_in_flight", "per turn", "MB"),
            None,
        ),
        Row::reported(
            "floor_acp_round_trip",
            "floor: ACP request and response",
            "a bare SDK client's untyped request to the smallest SDK agent (dsh-sim bench-agent) and its answer, over child pipes",
            series.spread("acp", "median round trip", MS),
            None,
        ),
        Row::reported(
            "floor_rmcp_round_trip",
            "floor: bare rmcp tools/call",
            "a bare rmcp client's tools/call to an rmcp stateless Streamable HTTP server on loopback, in this process",
            series.spread("rmcp", "median round trip", MS),
            None,
        ),
        Row::reported(
            "floor_rmcp_kept_round_trip",
            "floor: bare rmcp tools/call, connection kept",
            "the same with a pooling reqwest client, so every call after the first reuses its connection",
            series.spread("rmcp_kept", "median round trip", MS),
            None,
        ),
        Row::reported(
            "floor_rmcp_across_round_trip",
            "floor: bare rmcp tools/call from another process",
            "a bare rmcp client in a child process (dsh-sim bench-mcp-client, rmcp's default client: a fresh connection per request) calling the rmcp server in this one, as the server's MCP client calls the bridge; the tool round's floor",
            series.spread("rmcp_across", "median round trip", MS),
            None,
        ),
        Row::reported(
            "floor_rmcp_across_kept_round_trip",
            "floor: bare rmcp tools/call from another process, connection kept",
            "the same with a pooling reqwest client in the child",
            series.spread("rmcp_across_kept", "median round trip", MS),
            None,
        ),
        Row::reported(
            "floor_acp_session_prompt",
            "floor: a bare ACP session/new and text prompt",
            "a bare SDK client's session/new and one-chunk text prompt to the fake on a warm process: what a warm turn cannot do without, and what a cold turn adds to spawn → initialize at least",
            series.spread("bare_session", "median session/new + prompt", MS),
            None,
        ),
        Row::reported(
            "floor_raw_http",
            "floor: raw HTTP POST on loopback",
            "a reqwest POST echoed by axum, no MCP",
            series.spread("http", "median round trip", MS),
            None,
        ),
        Row::reported(
            "floor_spawn_pipe",
            "floor: spawn and pipe a trivial process",
            "spawning cat, writing a line and reading it back",
            series.spread("spawn_pipe", "median", MS),
            None,
        ),
    ]);
    rows.extend(growth_rows(series));
    rows.extend(chat_wait_rows(series));
    rows
}

/// The growing chat's rows: its slope (the goal), its published generations against the
/// first, its resident set's growth, and the same with 256 tools offered.
fn growth_rows(series: &Series) -> Vec<Row> {
    let slope_goal = at_most(2.0);
    let mut rows = vec![Row::reported(
        "chat_growth_slope",
        "a growing chat: time per KB of history",
        "one chat on a pooled process (one tool offered), its history growing by 2 KB a round, generated again every round; the least-squares slope of each generation's time (generate to finish) over its history's size, in µs per KB on top of the turn's fixed cost",
        series.spread("chat_slope", "slope", "µs/KB"),
        slope_goal,
    )];
    for (id, name, measures) in [
        (
            "chat_growth_10",
            "chat_10",
            "generation 10 of the growing chat (20 KB of history) against its first (2 KB), generate to finish",
        ),
        (
            "chat_growth_100",
            "chat_100",
            "generation 100 of the growing chat (200 KB of history) against its first (2 KB), generate to finish",
        ),
        (
            "chat_growth_300",
            "chat_300",
            "generation 300 of the growing chat (600 KB of history) against its first (2 KB), generate to finish",
        ),
    ] {
        rows.push(Row::compared(
            id,
            "a growing chat's generation vs its first",
            measures,
            series.spread(name, "the generation", MS),
            series.spread("chat_1", "generation 1", MS),
            ValueKind::Ratio,
            None,
        ));
    }
    rows.extend([
        Row::reported(
            "chat_growth_rss",
            "a growing chat: resident set from its first to its last published generation",
            "the DSH + adapter process's resident set after generation 300 (600 KB of history) minus after generation 1",
            series.spread("chat_rss", "growth", "MB"),
            None,
        ),
        Row::reported(
            "chat_256_tools_slope",
            "a growing chat with 256 tools offered: time per KB of history",
            "the same chat with a catalogue of 256 tools offered every generation",
            series.spread("chat256_slope", "slope", "µs/KB"),
            slope_goal,
        ),
        Row::compared(
            "chat_256_tools_turn",
            "a chat's first generation with 256 tools offered vs with one",
            "generation 1 of the growing chat with 256 tools offered against the same with one tool: what a large catalogue costs a turn",
            series.spread("chat256_1", "generation 1, 256 tools", MS),
            series.spread("chat_1", "generation 1, one tool", MS),
            ValueKind::Ratio,
            None,
        ),
        Row::compared(
            "chat_256_tools_300",
            "a growing chat with 256 tools: generation 300 vs its first",
            "generation 300 of the growing chat with 256 tools offered against its first",
            series.spread("chat256_300", "generation 300, 256 tools", MS),
            series.spread("chat256_1", "generation 1, 256 tools", MS),
            ValueKind::Ratio,
            None,
        ),
    ]);
    rows
}

/// The suite's rows (one run, so each spread is one value).
pub(super) fn suite_rows(figures: &SuiteFigures) -> Vec<Row> {
    let wall = figures.wall.as_secs_f64();
    let share = figures.runner_cpu.as_secs_f64() / wall.max(1e-9);
    let servers = figures.servers_cpu.as_secs_f64() / wall.max(1e-9);
    vec![
        Row::reported(
            "suite_wall",
            "the scenario suite's wall time",
            "every scenario run one after another on the fake, in this process, as dsh-sim run runs them",
            Spread::of(
                format!("{} scenarios, {} failed", figures.scenarios, figures.failed),
                "s",
                vec![wall],
            ),
            None,
        ),
        Row::reported(
            "suite_adapter_share",
            "the adapter's share of the suite's wall time",
            "CPU time of the process holding the adapter and the simulator over the suite's wall time (an upper bound of the adapter's share)",
            Spread::of("adapter + simulator CPU / wall", "", vec![share]),
            None,
        ),
        Row::reported(
            "suite_servers_share",
            "the servers' share of the suite's wall time",
            "CPU time of the fake servers the suite launched over its wall time",
            Spread::of("servers' CPU / wall", "", vec![servers]),
            None,
        ),
    ]
}

/// The waits per message of a chat on a fake as slow as 1.3.0 at set-up, each against the
/// fake's prompt latency (the part no adapter can hide).
fn chat_wait_rows(series: &Series) -> Vec<Row> {
    const LATER: &str = "messages 2 to the last, median";
    let floor = || series.spread("chat_prompt", "the fake's prompt latency", MS);
    let row = |id, title, measures, name, what, goal| {
        Row::compared(
            id,
            title,
            measures,
            series.spread(name, what, MS),
            floor(),
            ValueKind::Ratio,
            goal,
        )
    };
    vec![
        row(
            "chat_wait",
            "a DSH chat on a server as slow as 1.3.0: the wait per message, after a person's pause",
            "a chat of --chat-messages (5) text messages, one tool and a model the session must select, the same every message, on a fake with 1.3.0's set-up latencies divided by --chat-scale (10: initialize 850, session/new 480, session/set_config_option 280, prompt 100 ms), --chat-pause-ms (1500) between messages: DSH's stream call to the first text delta",
            "chat_steady",
            LATER,
            at_most(1.2),
        ),
        row(
            "chat_wait_tool_round",
            "the same chat with a tool round in every message",
            "the same chat, each message's first generation streaming text, then a tool call that DSH answers, then text: the wait to the first generation's first text delta",
            "chat_tool_round",
            LATER,
            at_most(1.2),
        ),
        row(
            "chat_wait_first",
            "the same chat's first message (it starts the process)",
            "message 1 of the steady chat: spawn, initialize, the bridge, session/new, the model's selection, the prompt",
            "chat_first",
            "message 1",
            None,
        ),
        row(
            "chat_wait_short_pause",
            "the same chat after a short pause",
            "the steady chat with --chat-short-pause-ms (200) between messages, shorter than the set-up: how much of it is still waited for",
            "chat_short_pause",
            LATER,
            None,
        ),
        row(
            "chat_wait_no_pause",
            "the same chat with no pause",
            "the steady chat, each message sent as soon as the last one finished: must be no slower than without sessions prepared ahead",
            "chat_no_pause",
            LATER,
            None,
        ),
        row(
            "chat_wait_tools_changed",
            "a message whose tool catalogue changed",
            "message 3 of a chat (long pauses) whose catalogue grows from one tool to two there",
            "chat_tools_changed",
            "message 3",
            None,
        ),
        row(
            "chat_wait_model_changed",
            "a message whose model changed",
            "message 4 of the same chat, whose model changes there",
            "chat_model_changed",
            "message 4",
            None,
        ),
    ]
}
