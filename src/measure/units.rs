//! Figures as people read them: throughput with thousands separators,
//! ratios, latencies and sizes in the unit that reads best. The terminal,
//! the progress line and every report format print through these, so a
//! figure reads the same everywhere.

/// Throughput with thousands separators (two decimals below 100).
pub fn fmt_throughput(v: f64) -> String {
    if v < 100.0 {
        return format!("{v:.2}");
    }
    let s = format!("{:.0}", v);
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A ratio of costs: two decimals, or two significant digits below 0.1
/// (a cost that fell 250-fold is ×0.0040, not ×0.00).
/// Four significant digits: per-row figures of a scan are tiny, and more
/// digits than a window's counts resolve would only look precise.
pub fn four_digits(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// A figure per operation or per call, to three significant digits.
pub fn fmt_us(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

pub fn fmt_ratio(r: f64) -> String {
    if r >= 0.1 || r == 0.0 {
        format!("{r:.2}")
    } else {
        let digits = (1 - r.log10().floor() as i32).clamp(2, 6) as usize;
        format!("{r:.digits$}")
    }
}

/// A duration as a person reads it: seconds under a minute and a half,
/// minutes under an hour and a half, hours above.
pub fn human_secs(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A latency in µs, in the unit that reads best.
pub fn fmt_latency(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b < 1024.0 * 1024.0 {
        format!("{:.0} KiB", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.2} GiB", b / 1024.0 / 1024.0 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_throughput(1234567.4), "1,234,567");
        assert_eq!(fmt_throughput(999.6), "1,000");
        assert_eq!(fmt_throughput(12.345), "12.35");
        assert_eq!(fmt_latency(250.0), "250 µs");
        assert_eq!(fmt_ratio(1.3712), "1.37");
        assert_eq!(fmt_ratio(0.004), "0.0040");
        assert_eq!(fmt_ratio(0.0123), "0.012");
        assert_eq!(fmt_latency(2500.0), "2.50 ms");
    }
}
