//! The typed parts a cell is built from: what its windows measured, its
//! hardware costs, the server's internals, the test against the base and
//! the judgement. Each part is filled by the stage that knows it (the
//! windows, then the comparison); report.json flattens them.

use super::*;

/// One statement class's latency in a cell, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StatementLatency {
    pub count: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// One target's figures for one row, the median over repeats, built from
/// typed parts: what its windows measured ([`Figures`]), what it cost
/// ([`Hardware`]), what the server did inside ([`Internals`]), and, once
/// compared with its base, the test ([`Test`]) and the judgement
/// ([`Judgement`]). Each part is flattened in report.json, whose keys are
/// the fields' own.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Cell {
    #[serde(flatten)]
    pub figures: Figures,
    #[serde(flatten)]
    pub hardware: Hardware,
    #[serde(flatten)]
    pub internals: Internals,
    #[serde(flatten)]
    pub test: Test,
    #[serde(flatten)]
    pub judgement: Judgement,
}

/// What the cell's windows measured: throughput and its spread, the
/// repeats it rests on, latency, errors, what the step left on disk.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    pub throughput: Option<f64>,
    /// Throughput of each repeat that did not fail, in repeat order.
    pub throughputs: Vec<f64>,
    /// The round (repeat) of each of `throughputs`: the paired test pairs
    /// a target's window with its base's of the same round.
    #[serde(skip)]
    pub rounds: Vec<u32>,
    /// The median's confidence interval (with two or more repeats).
    pub throughput_interval: Option<stats::Interval>,
    /// How many repeats were measured.
    pub repeats: usize,
    /// The latest repeat among its windows (failed and disturbed ones
    /// too): an adaptive run's cell is judged at the level of the look
    /// that repeat's round led to (`measure::sequential::level`).
    #[serde(skip)]
    pub last_repeat: u32,
    /// Why the step has no figure, when it failed in every repeat.
    pub failed: Option<String>,
    pub p99_us: Option<f64>,
    pub errors: u64,
    /// The measured window's length, the machine's CPU utilisation and
    /// the devices' (medians over repeats): what bounded the step.
    pub window_secs: Option<f64>,
    /// The step's client count (an operation's time is clients ÷
    /// throughput).
    #[serde(skip)]
    pub clients: u32,
    /// Per-second throughput of a target's single repeat (whole seconds),
    /// for the within-run test.
    #[serde(skip)]
    pub second_rates: Vec<f64>,
    /// Database size on disk after the step, and the server's peak
    /// resident memory during it (medians over repeats).
    pub db_bytes_after: Option<u64>,
    pub server_rss_peak_bytes: Option<u64>,
}

/// Hardware cost per operation and the machine's rates over the window,
/// and each against the base's.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Hardware {
    /// Cost per operation by [`Cost::key`], median over repeats; a cost
    /// that was not measured is absent.
    pub costs: BTreeMap<Cost, f64>,
    /// Target ÷ base for each cost both have (above 1 = more cost).
    pub costs_relative: BTreeMap<Cost, f64>,
    /// The rank test's p-value for each cost, with repeats on both sides.
    pub costs_p: BTreeMap<Cost, f64>,
    /// Each cost per repeat, with its round, for the tests.
    #[serde(skip)]
    pub cost_samples: BTreeMap<Cost, Vec<(u32, f64)>>,
    /// The machine's rates over the window (medians over repeats), and
    /// target ÷ base for each.
    pub rates: BTreeMap<Rate, f64>,
    pub rates_relative: BTreeMap<Rate, f64>,
    pub cpu_util_pct: Option<f64>,
    pub disk_util_pct: Option<f64>,
    /// The benchmark's own CPU over the window, in % of one core, and the
    /// cores its threads can use: one per client (a connection runs one
    /// statement at a time), no more than the machine's.
    pub own_cpu_pct: Option<f64>,
    pub usable_cores: Option<f64>,
}

/// What the server did inside: statement latency, engine counters,
/// waits, statements by its own accounting, plans, the profile.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Internals {
    /// Latency per statement class (and `event`), medians over repeats.
    pub statements: BTreeMap<String, StatementLatency>,
    /// The engine's counters that moved, per operation (median over
    /// repeats), and the ones that moved most against the base: (name,
    /// target ÷ base), largest first.
    pub counters_per_op: BTreeMap<String, f64>,
    pub counters_moved: Vec<(String, f64)>,
    /// Where the time went (`[profile]`), and against the base's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<super::profile::CellProfile>,
    /// Where the server waited, by its own accounting, and against the
    /// base's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waits: Option<super::waits::CellWaits>,
    /// What each statement did, by the server's own accounting, and the
    /// figures that moved against the base's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_statements: Option<super::statements::CellStatements>,
    /// The plans of the statements the step sent (its first repeat's).
    #[serde(skip)]
    pub plans: Vec<crate::measure::plans::StatementPlan>,
    /// The statements whose plan differs from the base's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plans_differ: Vec<PlanDiff>,
}

/// The test against the base: the ratio, its interval and p-value, and
/// the A/A floor the band widens to. Empty on a base's own cell.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Test {
    /// Target ÷ base.
    pub relative: Option<f64>,
    /// Set when the target and its base both have two or more repeats.
    pub significance: Option<Significance>,
    /// The row's A/A noise floor (see [`Row::noise_floor`]), copied here
    /// so a cell can judge itself.
    pub noise_floor: Option<f64>,
}

impl Test {
    /// The test that gave the interval and p-value, if the cell was tested.
    pub fn method(&self) -> Option<Method> {
        self.significance.as_ref().map(|s| s.method)
    }
}

/// How the windows ran and what that allows: disturbed, too short,
/// unsteady, an SLA or rate missed; and the verdict judged from them and
/// the test ([`Cell::verdict`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Judgement {
    /// The cell's verdict as every output shows it ([`Cell::verdict`]),
    /// set once the comparison is built.
    #[serde(rename = "verdict", skip_serializing_if = "Option::is_none")]
    pub judged: Option<Verdict>,
    /// This is a base's own cell: it is what the others are judged
    /// against, and has no verdict of its own.
    #[serde(skip)]
    pub is_base: bool,
    /// Why this target's figure is disturbed: every window it rests on ran
    /// while other programs or steal took ≥ 5% of the machine.
    pub disturbed: Option<String>,
    /// Disturbed windows left out because the cell had quiet ones.
    pub disturbed_left_out: usize,
    /// The base's figure on this step is disturbed.
    pub base_disturbed: bool,
    /// This target's window or its base's was too short to judge by.
    pub short_window: bool,
    /// Why a window of this cell never became steady (MSER-5 found no
    /// steady part and its throughput moved one way across it): the
    /// cell is not judged unless its change is larger than the drift
    /// ([`Judgement::drift`]), and more repeats would not settle it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsteady: Option<String>,
    /// The base's window never became steady.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub base_unsteady: bool,
    /// How far the unsteady windows of this cell and, once compared, its
    /// base's moved across a window (the largest |last third ÷ first
    /// third − 1|); 0 when every window settled.
    #[serde(skip)]
    pub drift: f64,
    /// Seconds at the start of the measured window that were still
    /// warming up (MSER-5's cut, where it is larger than the seconds'
    /// noise), median over the repeats that had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warming_secs: Option<f64>,
    /// Other programs' share of the machine over the window, in %
    /// (median over repeats).
    pub others_share_pct: Option<f64>,
    /// An Insert Benchmark q-step whose background inserts missed the SLA
    /// in some repeat: the lowest share of the target rate reached.
    pub sla_missed: Option<f64>,
    /// The base missed the SLA on this step: the comparison is not fair.
    pub base_sla_missed: bool,
    /// An open-loop step (`rate`) that fell short of its rate in some
    /// repeat: the lowest share of the rate reached. Its throughput is the
    /// server's limit, not the rate asked: not judged.
    pub rate_missed: Option<f64>,
}

impl Judgement {
    /// The step ran against less load than asked: an Insert Benchmark
    /// q-step whose background writes missed the SLA here or on the base,
    /// or an open-loop step short of its rate. Such a ratio is not judged.
    pub fn load_missed(&self) -> bool {
        self.sla_missed.is_some() || self.base_sla_missed || self.rate_missed.is_some()
    }
}

/// A statement the optimizer planned differently from the base.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlanDiff {
    pub sql: String,
    pub base_shape: String,
    pub shape: String,
    /// Both plans as the engines printed them.
    pub base_plan: String,
    pub plan: String,
}

impl PlanDiff {
    /// `SELECT c FROM sbtest1 WHERE id=$1: Index Scan using sbtest1_pkey
    /// on sbtest1 → Seq Scan on sbtest1`.
    pub fn describe(&self) -> String {
        let sql = crate::measure::plans::short_sql(&self.sql);
        format!("{sql}: {} → {}", self.base_shape, self.shape)
    }
}
