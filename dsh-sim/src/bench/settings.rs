//! How much work each benchmark does per repetition ([`BenchSettings`]), and the width of
//! the parallel round.

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
    /// The chats whose waits per message are timed (`chat_wait`).
    pub chat_wait: super::chat_wait::ChatWaitSettings,
    /// Scenario directory to run once as the suite benchmark, if any.
    pub suite: Option<std::path::PathBuf>,
    /// Only these groups (`floors`, `tool_round`, `parallel_64`, `warm_vs_cold`,
    /// `first_tool`, `cold_turn`, `streaming`, `memory`, `growth`, `chat_wait`); all when `None`. For
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
            chat_wait: super::chat_wait::ChatWaitSettings::default(),
            suite: None,
            only: None,
        }
    }
}
