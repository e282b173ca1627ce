//! `dsh-sim bench`'s command line: the options, the table it prints and the JSON document
//! it writes (`--json`). What it measures is [`crate::bench`].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::bench::report::{Document, GoalOp, Row, ValueKind};
use crate::bench::{BenchSettings, run_bench};

/// `dsh-sim bench`'s options.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Interleaved repetitions (each measures every benchmark and its floor).
    #[arg(long, default_value_t = 5)]
    pub repetitions: usize,
    /// Sequential one-call tool rounds per repetition.
    #[arg(long, default_value_t = 200)]
    pub rounds: usize,
    /// Rounds of 64 parallel calls per repetition.
    #[arg(long, default_value_t = 10)]
    pub parallel_rounds: usize,
    /// Warm text turns per repetition.
    #[arg(long, default_value_t = 30)]
    pub turns: usize,
    /// Cold text turns of each confinement per repetition.
    #[arg(long, default_value_t = 5)]
    pub cold_turns: usize,
    /// Round trips of each ACP and MCP floor per repetition.
    #[arg(long, default_value_t = 300)]
    pub floor_calls: usize,
    /// Stream sizes in server chunks (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [20_000usize, 100_000])]
    pub chunks: Vec<usize>,
    /// Sequential turns over which the resident set's growth is read.
    #[arg(long, default_value_t = 1_000)]
    pub memory_turns: usize,
    /// Generations of the growing chat (1 tool, then 256), per repetition.
    #[arg(long, default_value_t = 300)]
    pub generations: usize,
    /// Messages of each chat whose wait per message is timed (`chat_wait`).
    #[arg(long, default_value_t = 5)]
    pub chat_messages: usize,
    /// The chats' fake is 1.3.0's recorded set-up latencies divided by this (10: a tenth).
    #[arg(long, default_value_t = 10)]
    pub chat_scale: u64,
    /// A person's pause between a chat's messages, in ms (the long one).
    #[arg(long, default_value_t = 1_500)]
    pub chat_pause_ms: u64,
    /// The short pause between messages, in ms.
    #[arg(long, default_value_t = 200)]
    pub chat_short_pause_ms: u64,
    /// Also run this scenario folder once, for the suite's wall time and its shares.
    #[arg(long)]
    pub suite: Option<PathBuf>,
    /// Only these groups (comma-separated: floors, tool_round, parallel_64, warm_vs_cold,
    /// first_tool, cold_turn, streaming, memory, growth, chat_wait), e.g. to profile one
    /// figure.
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<String>>,
    /// Write the figures as a JSON document (antigravity-acp-bench/1) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs `bench`: prints the table, writes the document if asked.
pub fn bench(args: BenchArgs) -> ExitCode {
    match measure_and_report(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("dsh-sim: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn measure_and_report(args: BenchArgs) -> anyhow::Result<()> {
    let program = std::env::current_exe().context("cannot find the dsh-sim binary itself")?;
    let settings = BenchSettings {
        repetitions: args.repetitions,
        rounds: args.rounds,
        parallel_rounds: args.parallel_rounds,
        turns: args.turns,
        cold_turns: args.cold_turns,
        floor_calls: args.floor_calls,
        chunks: args.chunks,
        memory_turns: args.memory_turns,
        generations: args.generations,
        chat_wait: crate::bench::chat_wait::ChatWaitSettings {
            messages: args.chat_messages,
            scale: args.chat_scale,
            pause: std::time::Duration::from_millis(args.chat_pause_ms),
            short_pause: std::time::Duration::from_millis(args.chat_short_pause_ms),
        },
        suite: args.suite,
        only: args.only,
        ..BenchSettings::default()
    };
    let document = run_bench(&program, &settings)?;
    print!("{}", table(&document));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&document)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn number(value: f64, unit: &str) -> String {
    let text = if value.abs() >= 1000.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    };
    if unit.is_empty() {
        text
    } else {
        format!("{text} {unit}")
    }
}

fn verdict(row: &Row) -> String {
    match (&row.goal, row.met) {
        (Some(goal), Some(met)) => {
            let op = match goal.op {
                GoalOp::AtMost => "<=",
                GoalOp::Below => "<",
                GoalOp::AtLeast => ">=",
            };
            format!(
                "{op} {} {}",
                goal.value,
                if met { "met" } else { "NOT MET" }
            )
        }
        _ => "reported".to_owned(),
    }
}

/// The document as a table: one line per row.
pub fn table(document: &Document) -> String {
    let mut out = format!(
        "{} repetitions, {} cpus, {}\n{:<24} {:>16} {:>16} {:>26} {:>16}\n",
        document.repetitions,
        document.machine.cpus,
        document.date,
        "benchmark",
        "figure",
        "floor",
        "value (median [min–max])",
        "goal"
    );
    for row in &document.rows {
        let floor = row
            .floor
            .as_ref()
            .map_or_else(|| "-".to_owned(), |f| number(f.median, &f.unit));
        let kind = match row.value.kind {
            ValueKind::Ratio => "×",
            ValueKind::Difference | ValueKind::Figure => "",
        };
        let value = format!(
            "{}{kind} [{}–{}]",
            number(row.value.median, &row.value.unit),
            number(row.value.min, ""),
            number(row.value.max, "")
        );
        out.push_str(&format!(
            "{:<24} {:>16} {:>16} {:>26} {:>16}\n",
            row.id,
            number(row.figure.median, &row.figure.unit),
            floor,
            value,
            verdict(row)
        ));
    }
    out
}
