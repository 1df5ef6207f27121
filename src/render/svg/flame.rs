//! Flame graphs as SVG, from the model's trees (`compare::profile::Flame`:
//! every frame's µs/op, and the base's at the same chain): the root at the
//! bottom, callees above, each frame as wide as its µs/op. Against a base
//! a frame is red where it grew and blue where it shrank (Gregg's
//! differential flame graph), deeper with the change; alone, in warm
//! colours by name. Each frame is a `<rect class="frame">` with a
//! `<title>` naming the function and its µs/op, so hovering says it.

use std::fmt::Write;

use super::Chart;
use crate::compare::profile::Flame;
use crate::render::escape::escape;

const WIDTH: f64 = 1200.0;
const ROW: f64 = 16.0;
const TOP: f64 = 24.0;

/// A flame graph of `f`, or none when it holds nothing.
pub fn flame(f: &Flame, title: &str, file: String) -> Option<Chart> {
    if f.us <= 0.0 {
        return None;
    }
    let depth = depth(f);
    let height = TOP + ROW * depth as f64 + 4.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="flame" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<text x="4" y="15" font-size="13">{}</text>"#,
        escape(title)
    );
    let scale = WIDTH / f.us;
    frame(&mut s, f, 0.0, height - 4.0 - ROW, scale, f.us);
    s.push_str("</svg>");
    Some(Chart {
        file,
        title: title.to_string(),
        svg: s,
    })
}

fn depth(f: &Flame) -> usize {
    1 + f.children.iter().map(depth).max().unwrap_or(0)
}

/// A stable warm colour for a name, or the change's colour against the
/// base.
fn fill(f: &Flame, total: f64) -> String {
    match f.base_us {
        Some(b) => {
            let d = f.us - b;
            // Full colour at a change of a tenth of the whole.
            let k = (d.abs() / (0.1 * total)).min(1.0);
            let pale = (235.0 - 175.0 * k) as u8;
            if d.abs() < 0.005 * total {
                "rgb(235,235,235)".into()
            } else if d > 0.0 {
                format!("rgb(245,{pale},{pale})")
            } else {
                format!("rgb({pale},{pale},245)")
            }
        }
        None => {
            let h = f
                .name
                .bytes()
                .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
            format!(
                "rgb({},{},{})",
                205 + (h % 50),
                80 + ((h >> 8) % 130),
                40 + ((h >> 16) % 40)
            )
        }
    }
}

fn frame(s: &mut String, f: &Flame, x: f64, y: f64, scale: f64, total: f64) {
    let w = f.us * scale;
    if w < 0.5 {
        return;
    }
    let tip = match f.base_us {
        Some(b) => format!(
            "{}: {:.3} µs/op (base {:.3} µs/op, {:+.3})",
            f.name,
            f.us,
            b,
            f.us - b
        ),
        None => format!(
            "{}: {:.3} µs/op ({:.1}%)",
            f.name,
            f.us,
            f.us / total * 100.0
        ),
    };
    let _ = write!(
        s,
        r#"<g><title>{}</title><rect class="frame" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{}" fill="{}" rx="1"/>"#,
        escape(&tip),
        ROW - 1.0,
        fill(f, total)
    );
    // A label where it fits: about 6.5 px a character.
    let fits = ((w - 6.0) / 6.5) as usize;
    if fits >= 3 {
        let name: String = if f.name.chars().count() > fits {
            let mut t: String = f.name.chars().take(fits.saturating_sub(2)).collect();
            t.push_str("..");
            t
        } else {
            f.name.clone()
        };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            x + 3.0,
            y + ROW - 4.0,
            escape(&name)
        );
    }
    s.push_str("</g>");
    let mut cx = x;
    for c in &f.children {
        frame(s, c, cx, y - ROW, scale, total);
        cx += c.us * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_as_wide_as_their_figures_and_say_them_on_hover() {
        let f = Flame {
            name: "all".into(),
            us: 10.0,
            base_us: Some(5.0),
            children: vec![Flame {
                name: "parse<T>".into(),
                us: 5.0,
                base_us: Some(1.0),
                children: vec![],
            }],
        };
        let c = flame(&f, "t", "f.svg".into()).unwrap();
        assert_eq!(c.svg.matches("class=\"frame\"").count(), 2);
        assert!(c.svg.contains("width=\"600.0\""), "{}", c.svg);
        assert!(c
            .svg
            .contains("parse&lt;T&gt;: 5.000 µs/op (base 1.000 µs/op, +4.000)"));
        // Grown: red.
        assert!(c.svg.contains("fill=\"rgb(245,"));
    }
}
