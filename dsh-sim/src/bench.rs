//! `dsh-sim bench`: the adapter's speed and memory, each figure as a ratio to a floor
//! measured in the same run. On a shared 2-core machine an absolute figure swings 2–4×
//! between runs; a ratio to a floor measured beside it does not. Every repetition
//! measures each benchmark and then its floor, back to back, and the rows carry the
//! median and spread of the per-repetition ratios (`report`). Hand-rolled timing, not
//! criterion or divan: every figure spans real processes, pipes and HTTP, which those
//! harnesses' in-process iteration model does not fit.
//!
//! The rooms: [`harness`] (providers on the fake, DSH's request), [`bare_acp`] and
//! [`mcp_floor`] (the floors, on the SDKs alone), [`rounds`], [`turns`], [`first_tool`],
//! [`growth`], [`streaming`], [`memory`] and [`suite`] (what each benchmark times), and
//! [`report`] (the document).

pub mod bare_acp;
pub mod first_tool;
pub mod growth;
pub mod harness;
pub mod mcp_floor;
pub mod memory;
pub mod report;
pub mod rounds;
pub mod streaming;
pub mod suite;
pub mod turns;

mod rows;

use std::path::Path;
use std::time::Duration;

pub use rows::BenchError;

use self::harness::Bench;
use self::report::{Document, Machine, Row};

/// How much work each benchmark does per repetition.
#[derive(Debug, Clone)]
pub struct BenchSettings {
    /// Interleaved repetitions (at least 5 for the published figures).
    pub repetitions: usize,
    /// Sequential tool rounds of one call, inside one prompt.
    pub rounds: usize,
    /// Rounds of [`PARALLEL_WIDTH`] parallel calls.
    pub parallel_rounds: usize,
    /// Warm text turns.
    pub turns: usize,
    /// Cold text turns (no start-up delay) of each confinement.
    pub cold_turns: usize,
    /// Request/response round trips of each ACP and MCP floor.
    pub floor_calls: usize,
    /// The stream sizes, in server chunks.
    pub chunks: Vec<usize>,
    /// Sequential turns over which the resident set's growth is read.
    pub memory_turns: usize,
    /// Turns held in flight at once for the per-turn memory figure.
    pub in_flight: usize,
    /// Generations of the growing chat (its published marks are 1, 10, 100 and 300).
    pub generations: usize,
    /// Scenario directory to run once as the suite benchmark, if any.
    pub suite: Option<std::path::PathBuf>,
    /// Only these groups (`floors`, `tool_round`, `parallel_64`, `warm_vs_cold`,
    /// `first_tool`, `cold_turn`, `streaming`, `memory`, `growth`); all when `None`. For
    /// profiling one figure.
    pub only: Option<Vec<String>>,
}

/// The width of the parallel round.
pub const PARALLEL_WIDTH: usize = 64;

impl Default for BenchSettings {
    fn default() -> Self {
        Self {
            repetitions: 5,
            rounds: 200,
            parallel_rounds: 10,
            turns: 30,
            cold_turns: 5,
            floor_calls: 300,
            chunks: vec![20_000, 100_000],
            memory_turns: 1_000,
            in_flight: 8,
            generations: 300,
            suite: None,
            only: None,
        }
    }
}

/// The median of `durations`, in milliseconds.
pub fn median_ms(durations: &[Duration]) -> f64 {
    let mut sorted = durations.to_vec();
    sorted.sort();
    sorted
        .get(sorted.len() / 2)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Runs every benchmark with `program` as the fake (`fake-server`) and the floors'
/// agent (`bench-agent`). Call it outside a tokio runtime: it starts its own, and the
/// suite's scenarios start theirs.
pub fn run_bench(program: &Path, settings: &BenchSettings) -> Result<Document, BenchError> {
    if settings.repetitions == 0 {
        return Err(BenchError::Settings("--repetitions must be at least 1"));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?;
    let bench = std::sync::Arc::new(Bench::new(program)?);
    // On a worker, as a Rust host's agent loop would run: not on the thread that blocks.
    let measured = runtime.spawn({
        let (bench, settings) = (bench.clone(), settings.clone());
        async move { rows::measure(&bench, &settings).await }
    });
    let mut rows: Vec<Row> = runtime
        .block_on(measured)
        .map_err(|e| anyhow::anyhow!("the benchmarks' task failed: {e}"))??;
    drop(runtime);
    if let Some(dir) = &settings.suite {
        let figures = std::thread::scope(|scope| {
            scope
                .spawn(|| suite::run_suite(program, dir))
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the suite's thread panicked")))
        })?;
        rows.extend(rows::suite_rows(&figures));
    }
    Ok(Document {
        schema: report::SCHEMA,
        tool: "dsh-sim bench",
        date: report::utc_now(),
        machine: Machine::this(),
        repetitions: settings.repetitions,
        rows,
    })
}
