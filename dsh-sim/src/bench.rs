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
//! [`growth`], [`chat_wait`], [`streaming`], [`memory`] and [`suite`] (what each benchmark times),
//! [`settings`] (how much work each does), [`median`] (the one median of every figure),
//! and [`report`] (the document). Beside `dsh-sim bench`: [`install`] (`dsh-sim
//! bench-install`, the installer's checks) and [`confinement`] (`dsh-sim
//! bench-confinement`, confinement's cost at start-up).

pub mod bare_acp;
pub mod chat_wait;
pub mod confinement;
pub mod first_tool;
pub mod growth;
pub mod harness;
pub mod install;
pub mod mcp_floor;
pub mod median;
pub mod memory;
pub mod report;
pub mod rounds;
pub mod settings;
pub mod streaming;
pub mod suite;
pub mod turns;

mod rows;

use std::path::Path;

pub use rows::BenchError;
pub use settings::{BenchSettings, PARALLEL_WIDTH};

use self::harness::Bench;
use self::report::{Document, Machine, Row};

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
