//! The test every cell with repeats is judged by (`measure::paired`):
//! a target's rounds against its base's, paired by round, each cell's
//! variance moderated by the study's other cells; and, for a cell the
//! test leaves undecided, the repeats that would decide it.
//!
//! The prior is fitted to every compared cell whose windows are judged
//! (quiet, long enough, steady): a disturbed window measures another
//! program, and its spread would widen every interval of the study. An
//! A/A copy's cell is a cell like any other here: the spread of
//! identical work is exactly what the prior is for. The cells of one
//! comparison are one study; the variance of a round's difference does
//! not depend on the size of the change, so a changed cell's spread says
//! as much as a same one's.

use super::cell::{Cell, Method, Significance};
use super::{band_verdict, Row, Verdict};
use crate::measure::paired::{self, Sample, Var};
use crate::measure::stats::ALPHA;

/// Rounds up to which a cell alone in its study is compared unpaired.
const SMALL_UNPAIRED: usize = 3;

/// The most repeats "what would decide it" counts up to: past this a
/// change is at the band's edge, and repeats are not the answer.
pub const MOST_REPEATS: u32 = 100;

/// A cell's sample against its base's: paired by round where both carry
/// their rounds, unpaired otherwise (a history's sides, builds measured
/// in different runs).
pub(super) fn sample(c: &Cell, base: &Cell) -> Option<Sample> {
    let rounds = |x: &Cell| {
        (x.figures.rounds.len() == x.figures.throughputs.len()).then(|| {
            x.figures
                .rounds
                .iter()
                .copied()
                .zip(x.figures.throughputs.iter().copied())
                .collect::<Vec<(u32, f64)>>()
        })
    };
    match (rounds(c), rounds(base)) {
        (Some(t), Some(b)) => Sample::of(&t, &b),
        _ => Sample::unpaired(&c.figures.throughputs, &base.figures.throughputs),
    }
}

/// Whether a cell's windows can speak of the study's noise: compared,
/// quiet, long enough and steady on both sides.
fn judgeable(c: &Cell) -> bool {
    c.test.relative.is_some()
        && c.judgement.disturbed.is_none()
        && !c.judgement.base_disturbed
        && !c.judgement.short_window
        && c.judgement.unsteady.is_none()
        && !c.judgement.base_unsteady
}

/// A lone cell's sample (no other cells to moderate its variance by):
/// unpaired at up to [`SMALL_UNPAIRED`] rounds, where pairing costs more
/// degrees of freedom than the drift it cancels.
fn unpaired_when_few(s: Sample, c: &Cell, base: &Cell) -> Sample {
    match &s {
        Sample::Paired(d) if d.len() <= SMALL_UNPAIRED => {
            Sample::unpaired(&c.figures.throughputs, &base.figures.throughputs).unwrap_or(s)
        }
        _ => s,
    }
}

/// Tests every compared cell with repeats, cell `(row, target)` at level
/// `level(row, target)` (5%, or an adaptive run's look's), and fills its
/// significance, its ratio (the test's estimate, so the ratio is the
/// middle of its interval) and what would decide it. `needs_level` is
/// the level the repeats that would decide it are counted at.
pub(super) fn test_cells(
    rows: &mut [Row],
    base_of: &[usize],
    level: impl Fn(&Row, usize) -> f64,
    needs_level: f64,
) {
    let mut samples: Vec<(usize, usize, Sample)> = Vec::new();
    for (ri, row) in rows.iter().enumerate() {
        for (ti, c) in row.cells.iter().enumerate() {
            let b = base_of[ti];
            if b == ti || c.test.relative.is_none() {
                continue;
            }
            if let Some(s) = sample(c, &row.cells[b]) {
                samples.push((ri, ti, s));
            }
        }
    }
    let own: Vec<Var> = samples
        .iter()
        .filter(|(ri, ti, _)| judgeable(&rows[*ri].cells[*ti]))
        .filter_map(|(_, _, s)| s.own())
        .collect();
    let prior = paired::prior(&own);
    let alone = own.len() <= 1;
    for (ri, ti, s) in samples {
        // A cell alone in its study (no other judged cell to moderate
        // by): a pairing of two or three rounds costs half the degrees of
        // freedom (at 2 rounds the t quantile is 12.7 paired, 4.3
        // unpaired), so its windows are compared unpaired, which
        // round-to-round drift only makes more careful. Decided by the
        // study's design, before any figure is read. With other cells
        // and still no prior (two, or spreads below resolution) the
        // pairing is kept: a cell whose rounds agree shows it.
        let s = if alone {
            unpaired_when_few(s, &rows[ri].cells[ti], &rows[ri].cells[base_of[ti]])
        } else {
            s
        };
        let alpha = level(&rows[ri], ti);
        let Some(t) = paired::test(&s, prior, alpha) else {
            continue;
        };
        let c = &mut rows[ri].cells[ti];
        c.test.relative = Some(t.ratio);
        let needed = repeats_needed(c, &t, s.rounds(), needs_level);
        c.test.significance = Some(Significance {
            method: if s.is_paired() {
                Method::Paired
            } else {
                Method::Unpaired
            },
            p_value: (t.p_value * ALPHA / alpha).min(1.0),
            interval: Some(t.interval),
            equivalence: Some(t.equivalence),
            repeats_needed: needed,
            aa_pairs: None,
            df: Some(t.df),
            rounds: s.is_paired().then(|| s.rounds()),
        });
    }
}

/// Repeats that would decide a cell its test leaves undecided: enough to
/// put its interval inside the band when the ratio lies inside it, or
/// clear of 1 when it lies past it (its variance as now). `None` when it
/// is decided, or no number up to [`MOST_REPEATS`] would.
fn repeats_needed(c: &Cell, t: &paired::Test, rounds: usize, alpha: f64) -> Option<u32> {
    let (lo, hi) = c.judged_band();
    let ln = t.ratio.ln();
    let inside = t.ratio > lo && t.ratio < hi;
    // As the verdict reads it: the equivalence interval inside the band,
    // or the test's interval clear of 1.
    let decided = if inside {
        let e = t.equivalence;
        band_verdict(e.lo, lo, hi) == Verdict::Same && band_verdict(e.hi, lo, hi) == Verdict::Same
    } else {
        t.interval.lo > 1.0 || t.interval.hi < 1.0
    };
    if decided {
        return None;
    }
    // The half-width that would do, in ln(ratio), with a hair to spare
    // for the rounding the verdict reads the interval with; at the level
    // the interval that would decide it is read at.
    let (want, level) = if inside {
        ((hi.ln() - ln).min(ln - lo.ln()) - 0.005, 2.0 * alpha)
    } else {
        (ln.abs(), alpha)
    };
    paired::rounds_for(t.per_round(), rounds, want, level, MOST_REPEATS)
}

/// A history's or a bisect's two sides tested alone (no other cells to
/// moderate by) at 5%: the significance the explanation of a change
/// point quotes.
pub(super) fn test_pair(c: &mut Cell, base: &Cell) {
    let Some(s) = sample(c, base) else { return };
    let s = unpaired_when_few(s, c, base);
    let Some(t) = paired::test(&s, None, ALPHA) else {
        return;
    };
    c.test.significance = Some(Significance {
        method: if s.is_paired() {
            Method::Paired
        } else {
            Method::Unpaired
        },
        p_value: t.p_value,
        interval: Some(t.interval),
        equivalence: Some(t.equivalence),
        repeats_needed: None,
        aa_pairs: None,
        df: Some(t.df),
        rounds: s.is_paired().then(|| s.rounds()),
    });
}
