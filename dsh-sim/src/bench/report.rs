//! The benchmark document: rows of a figure, the floor it is compared with, the ratio
//! (or difference) of the two per repetition, and the goal; serialized as
//! `antigravity-acp-bench/1`, the format `dsh-sim bench --json`, the Node binding's
//! benchmark and `ci/bench-compare.sh` share.

use serde::Serialize;

/// The document format's name.
pub const SCHEMA: &str = "antigravity-acp-bench/1";

/// A measured quantity over the repetitions: median, spread and every value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// What was measured.
    pub what: String,
    /// Its unit (`ms`, `chunks/s`, `MB`; empty for a ratio).
    pub unit: String,
    /// The median over the repetitions.
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// Every repetition's value, in the order measured.
    pub values: Vec<f64>,
}

impl Spread {
    /// The spread of `values` (empty: all zero).
    pub fn of(what: impl Into<String>, unit: impl Into<String>, values: Vec<f64>) -> Self {
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        Self {
            what: what.into(),
            unit: unit.into(),
            median: super::median::median(&sorted),
            min: sorted.first().copied().unwrap_or_default(),
            max: sorted.last().copied().unwrap_or_default(),
            values,
        }
    }
}

/// How a row's value is formed from its figure and floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// Figure over floor, per repetition.
    Ratio,
    /// Figure minus floor, per repetition.
    Difference,
    /// The figure itself (no floor).
    Figure,
}

/// Which side of the goal is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GoalOp {
    /// At most.
    #[serde(rename = "<=")]
    AtMost,
    /// Below.
    #[serde(rename = "<")]
    Below,
    /// At least.
    #[serde(rename = ">=")]
    AtLeast,
}

/// A row's goal on its value's median.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Goal {
    /// The comparison.
    pub op: GoalOp,
    /// The bound.
    pub value: f64,
}

impl Goal {
    /// Whether `median` meets the goal.
    pub fn met_by(&self, median: f64) -> bool {
        match self.op {
            GoalOp::AtMost => median <= self.value,
            GoalOp::Below => median < self.value,
            GoalOp::AtLeast => median >= self.value,
        }
    }
}

/// The value a row is judged on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Value {
    /// How it is formed.
    pub kind: ValueKind,
    /// Its unit (empty for a ratio).
    pub unit: String,
    /// The median over the repetitions.
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// Every repetition's value.
    pub values: Vec<f64>,
}

/// One benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// A stable identifier (`ci/bench-compare.sh` matches rows by it).
    pub id: &'static str,
    /// The benchmark, in a few words.
    pub title: &'static str,
    /// What is timed, from where to where.
    pub measures: &'static str,
    /// The benchmark's own figure.
    pub figure: Spread,
    /// What it is compared with, measured in the same repetitions.
    pub floor: Option<Spread>,
    /// The ratio (or difference) per repetition.
    pub value: Value,
    /// The goal, if the row has one.
    pub goal: Option<Goal>,
    /// Whether the median meets the goal (`None` without one).
    pub met: Option<bool>,
}

impl Row {
    /// A row whose value is `figure / floor` (or `figure - floor`) per repetition.
    pub fn compared(
        id: &'static str,
        title: &'static str,
        measures: &'static str,
        figure: Spread,
        floor: Spread,
        kind: ValueKind,
        goal: Option<Goal>,
    ) -> Self {
        let values = figure
            .values
            .iter()
            .zip(&floor.values)
            .map(|(f, b)| match kind {
                ValueKind::Ratio => f / b.max(f64::MIN_POSITIVE),
                ValueKind::Difference => f - b,
                ValueKind::Figure => *f,
            })
            .collect();
        let unit = match kind {
            ValueKind::Ratio => String::new(),
            ValueKind::Difference | ValueKind::Figure => figure.unit.clone(),
        };
        Self::with_value(
            id,
            title,
            measures,
            figure,
            Some(floor),
            kind,
            unit,
            values,
            goal,
        )
    }

    /// A row reported as its figure alone.
    pub fn reported(
        id: &'static str,
        title: &'static str,
        measures: &'static str,
        figure: Spread,
        goal: Option<Goal>,
    ) -> Self {
        let (unit, values) = (figure.unit.clone(), figure.values.clone());
        let kind = ValueKind::Figure;
        Self::with_value(id, title, measures, figure, None, kind, unit, values, goal)
    }

    #[allow(clippy::too_many_arguments)]
    fn with_value(
        id: &'static str,
        title: &'static str,
        measures: &'static str,
        figure: Spread,
        floor: Option<Spread>,
        kind: ValueKind,
        unit: String,
        values: Vec<f64>,
        goal: Option<Goal>,
    ) -> Self {
        let spread = Spread::of("", unit, values);
        let value = Value {
            kind,
            unit: spread.unit,
            median: spread.median,
            min: spread.min,
            max: spread.max,
            values: spread.values,
        };
        let met = goal.map(|g| g.met_by(value.median));
        Self {
            id,
            title,
            measures,
            figure,
            floor,
            value,
            goal,
            met,
        }
    }
}

/// The machine a document was measured on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// Online processors.
    pub cpus: usize,
    /// `/proc/cpuinfo`'s first model name.
    pub cpu_model: String,
    /// The kernel release.
    pub kernel: String,
}

impl Machine {
    /// This machine.
    pub fn this() -> Self {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, name)| name.trim().to_owned())
            })
            .unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| k.trim().to_owned())
            .unwrap_or_default();
        Self {
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            cpu_model,
            kernel,
        }
    }
}

/// A whole benchmark run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Document {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Which producer wrote it.
    pub tool: &'static str,
    /// When the run finished (UTC, RFC 3339).
    pub date: String,
    /// Where it ran.
    pub machine: Machine,
    /// Interleaved repetitions per row.
    pub repetitions: usize,
    /// The benchmarks.
    pub rows: Vec<Row>,
}

/// Now, as RFC 3339 UTC to the second (no date crate: days from the civil calendar).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_row_is_formed_per_repetition() {
        let figure = Spread::of("round", "ms", vec![3.0, 1.0, 2.0]);
        let floor = Spread::of("floor", "ms", vec![1.0, 1.0, 2.0]);
        let goal = Goal {
            op: GoalOp::AtMost,
            value: 1.5,
        };
        let row = Row::compared("r", "t", "m", figure, floor, ValueKind::Ratio, Some(goal));
        assert_eq!(row.value.values, vec![3.0, 1.0, 1.0]);
        assert_eq!(
            (row.value.median, row.value.min, row.value.max),
            (1.0, 1.0, 3.0)
        );
        assert_eq!(row.met, Some(true));
        assert_eq!(row.figure.median, 2.0);
    }

    #[test]
    fn an_even_count_takes_the_middle_pair() {
        assert_eq!(Spread::of("", "", vec![4.0, 1.0, 3.0, 2.0]).median, 2.5);
    }

    #[test]
    fn goals_face_the_right_way() {
        let at_least = Goal {
            op: GoalOp::AtLeast,
            value: 0.9,
        };
        assert!(at_least.met_by(0.9) && !at_least.met_by(0.89));
        let below = Goal {
            op: GoalOp::Below,
            value: 1.0,
        };
        assert!(below.met_by(0.99) && !below.met_by(1.0));
    }

    #[test]
    fn the_date_is_rfc3339() {
        let now = utc_now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'), "{now}");
    }
}
