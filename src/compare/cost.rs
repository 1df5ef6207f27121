//! The costs per operation the report compares: one enum, so a cost is a
//! type that travels (model, tables, CSV columns, JSON keys), not a string
//! repeated across files. Adding a cost is one variant here and its field in
//! `results::StepMetrics`, filled by `metrics::costs`.

use serde::Serialize;

use crate::results::StepMetrics;

/// One cost per operation (per row for steps counted in rows). Variants
/// are declared in the order of their keys, so a map keyed by cost lists
/// them alphabetically in JSON; [`Cost::ALL`] is the tables' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cost {
    /// CPU of relbench itself (with an embedded engine, the engine too).
    ClientCpuUs,
    /// Busy CPU of the whole machine.
    CpuUs,
    /// Context switches of the whole machine.
    Cs,
    /// CPU of the server's processes and relbench's together: what the
    /// benchmark itself used, whatever else ran on the machine.
    OwnCpuUs,
    /// Context switches of the server's threads and relbench's together.
    OwnCs,
    /// Of those, the involuntary ones: a thread preempted.
    OwnIvcs,
    /// Of those, the voluntary ones: a thread waiting (fsync, a lock, the
    /// network).
    OwnVcs,
    ReadKb,
    Reads,
    /// CPU of a managed server's processes.
    ServerCpuUs,
    WriteKb,
    Writes,
}

impl Cost {
    /// The costs, in the order of the efficiency tables.
    pub const ALL: [Cost; 12] = [
        Cost::OwnCpuUs,
        Cost::CpuUs,
        Cost::ServerCpuUs,
        Cost::ClientCpuUs,
        Cost::OwnCs,
        Cost::OwnVcs,
        Cost::OwnIvcs,
        Cost::Cs,
        Cost::Reads,
        Cost::ReadKb,
        Cost::Writes,
        Cost::WriteKb,
    ];

    /// The costs that explain a change: the benchmark's own CPU where its
    /// processes are measured, the machine's otherwise (the explanation
    /// keeps one of the two); server and client CPU are parts of the own
    /// CPU; the benchmark's own context switches only (the machine's count
    /// every other program's and the kernel's: an embedded engine reading
    /// from the page cache was said to be "waiting" on them); write
    /// requests tell fsync waits from other IO.
    pub const EXPLAINING: [Cost; 8] = [
        Cost::OwnCpuUs,
        Cost::CpuUs,
        Cost::OwnCs,
        Cost::OwnVcs,
        Cost::OwnIvcs,
        Cost::ReadKb,
        Cost::WriteKb,
        Cost::Writes,
    ];

    /// Whether the figure is the machine's or its devices' (shared with
    /// whatever else runs), not the benchmark's own processes': from a
    /// disturbed window it measures the other program too.
    pub fn machine_wide(self) -> bool {
        !matches!(
            self,
            Cost::OwnCpuUs
                | Cost::ServerCpuUs
                | Cost::ClientCpuUs
                | Cost::OwnCs
                | Cost::OwnVcs
                | Cost::OwnIvcs
        )
    }

    /// Name in JSON and CSV.
    pub fn key(self) -> &'static str {
        match self {
            Cost::CpuUs => "cpu_us",
            Cost::OwnCpuUs => "own_cpu_us",
            Cost::ServerCpuUs => "server_cpu_us",
            Cost::ClientCpuUs => "client_cpu_us",
            Cost::Cs => "cs",
            Cost::OwnCs => "own_cs",
            Cost::OwnVcs => "own_vcs",
            Cost::OwnIvcs => "own_ivcs",
            Cost::Reads => "reads",
            Cost::ReadKb => "read_kb",
            Cost::Writes => "writes",
            Cost::WriteKb => "write_kb",
        }
    }

    /// Column heading.
    pub fn title(self) -> &'static str {
        match self {
            Cost::CpuUs => "machine CPU µs",
            Cost::OwnCpuUs => "CPU µs",
            Cost::ServerCpuUs => "server µs",
            Cost::ClientCpuUs => "client µs",
            Cost::Cs => "machine cs",
            Cost::OwnCs => "cs",
            Cost::OwnVcs => "vol cs",
            Cost::OwnIvcs => "invol cs",
            Cost::Reads => "reads",
            Cost::ReadKb => "read KiB",
            Cost::Writes => "writes",
            Cost::WriteKb => "write KiB",
        }
    }

    /// How the summary names it.
    pub fn short(self) -> &'static str {
        match self {
            Cost::OwnCpuUs => "CPU/op",
            Cost::CpuUs => "machine CPU/op",
            Cost::Cs => "machine cs/op",
            Cost::OwnCs => "cs/op",
            Cost::OwnVcs => "voluntary cs/op",
            Cost::OwnIvcs => "involuntary cs/op",
            Cost::ReadKb => "read KiB/op",
            Cost::WriteKb => "write KiB/op",
            other => other.title(),
        }
    }

    /// The figure in a step's results, when it was measured.
    pub fn of(self, m: &StepMetrics) -> Option<f64> {
        match self {
            Cost::CpuUs => m.cpu_us_per_op,
            Cost::OwnCpuUs => m.own_cpu_us_per_op,
            Cost::ServerCpuUs => m.server_cpu_us_per_op,
            Cost::ClientCpuUs => m.client_cpu_us_per_op,
            Cost::Cs => m.cs_per_op,
            Cost::OwnCs => m.own_cs_per_op,
            Cost::OwnVcs => m.own_vcs_per_op,
            Cost::OwnIvcs => m.own_ivcs_per_op,
            Cost::Reads => m.reads_per_op,
            Cost::ReadKb => m.read_kb_per_op,
            Cost::Writes => m.writes_per_op,
            Cost::WriteKb => m.write_kb_per_op,
        }
    }
}

/// A rate of the machine over a step's window, as vmstat and iostat print
/// it: not per operation, but what the step kept the machine doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// Busy CPU (us + sy) of all CPUs, %.
    CpuPct,
    CsPerSec,
    ReadsPerSec,
    ReadMbPerSec,
    WritesPerSec,
    WriteMbPerSec,
}

impl Rate {
    pub const ALL: [Rate; 6] = [
        Rate::CpuPct,
        Rate::CsPerSec,
        Rate::ReadsPerSec,
        Rate::ReadMbPerSec,
        Rate::WritesPerSec,
        Rate::WriteMbPerSec,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Rate::CpuPct => "CPU %",
            Rate::CsPerSec => "cs/s",
            Rate::ReadsPerSec => "r/s",
            Rate::ReadMbPerSec => "rMB/s",
            Rate::WritesPerSec => "w/s",
            Rate::WriteMbPerSec => "wMB/s",
        }
    }

    /// The figure in a step's results, when it was measured.
    pub fn of(self, m: &StepMetrics) -> Option<f64> {
        let sys = m.system.as_ref();
        let disk = m.disk.as_ref();
        match self {
            Rate::CpuPct => sys.map(|s| s.cpu_util_pct),
            Rate::CsPerSec => sys.map(|s| s.cs_per_sec),
            Rate::ReadsPerSec => disk.map(|d| d.reads_per_sec),
            Rate::ReadMbPerSec => disk.map(|d| d.read_mb_per_sec),
            Rate::WritesPerSec => disk.map(|d| d.writes_per_sec),
            Rate::WriteMbPerSec => disk.map(|d| d.write_mb_per_sec),
        }
    }
}
