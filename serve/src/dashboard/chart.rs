//! The composite score over experiments as a hand-written SVG: one point per
//! experiment with a score after, joined in id order; keeps are green dots, reverts
//! red crosses, any other verdict a grey square.

use std::fmt::Write;

use factory_runtime::store::{ExperimentRecord, Verdict};

use super::layout::esc;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 240.0;
const PAD_L: f64 = 56.0;
const PAD_R: f64 = 16.0;
const PAD_T: f64 = 16.0;
const PAD_B: f64 = 32.0;

/// The chart, or `None` when no experiment has a score to draw.
pub fn score_chart(records: &[ExperimentRecord]) -> Option<String> {
    let points: Vec<(&ExperimentRecord, f64)> = records
        .iter()
        .filter_map(|r| Some((r, r.score_after?)))
        .filter(|(_, s)| s.is_finite())
        .collect();
    if points.is_empty() {
        return None;
    }
    let (mut lo, mut hi) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), (_, s)| {
            (lo.min(*s), hi.max(*s))
        });
    if (hi - lo).abs() < 1e-9 {
        lo -= 0.05;
        hi += 0.05;
    }
    let pad = (hi - lo) * 0.1;
    let (lo, hi) = (lo - pad, hi + pad);
    let n = points.len();
    let x = |i: usize| {
        let span = WIDTH - PAD_L - PAD_R;
        PAD_L
            + if n == 1 {
                span / 2.0
            } else {
                span * i as f64 / (n - 1) as f64
            }
    };
    let y = |s: f64| PAD_T + (HEIGHT - PAD_T - PAD_B) * (1.0 - (s - lo) / (hi - lo));
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\" aria-label=\"composite score over experiments\">"
    );
    for (frac, label) in [(0.0, hi), (0.5, (hi + lo) / 2.0), (1.0, lo)] {
        let gy = PAD_T + (HEIGHT - PAD_T - PAD_B) * frac;
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{PAD_L}\" y1=\"{gy:.1}\" x2=\"{:.0}\" y2=\"{gy:.1}\"/>\
             <text class=\"axis\" x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{label:.3}</text>",
            WIDTH - PAD_R,
            PAD_L - 6.0,
            gy + 4.0
        );
    }
    let line: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, (_, s))| format!("{:.1},{:.1}", x(i), y(*s)))
        .collect();
    let _ = write!(
        svg,
        "<polyline class=\"line\" points=\"{}\"/>",
        line.join(" ")
    );
    let every = n.div_ceil(12).max(1);
    for (i, (r, s)) in points.iter().enumerate() {
        let (px, py) = (x(i), y(*s));
        let title = format!(
            "exp {:03} {}: {:.4}{}",
            r.id,
            r.verdict,
            s,
            r.delta.map(|d| format!(" ({d:+.4})")).unwrap_or_default()
        );
        let mark = match r.verdict {
            Verdict::Keep => {
                format!("<circle class=\"keep\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5\"/>")
            }
            Verdict::Revert => format!(
                "<path class=\"revert\" d=\"M{:.1},{:.1}l8,8m0,-8l-8,8\"/>",
                px - 4.0,
                py - 4.0
            ),
            _ => format!(
                "<rect class=\"other\" x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\"/>",
                px - 4.0,
                py - 4.0
            ),
        };
        let _ = write!(
            svg,
            "<g class=\"point\" data-verdict=\"{}\"><title>{}</title>{mark}</g>",
            r.verdict,
            esc(&title)
        );
        if i % every == 0 || i + 1 == n {
            let _ = write!(
                svg,
                "<text class=\"axis\" x=\"{px:.1}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>",
                HEIGHT - 10.0,
                r.id
            );
        }
    }
    svg.push_str("</svg>");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: u32, verdict: Verdict, score: Option<f64>) -> ExperimentRecord {
        ExperimentRecord {
            id,
            timestamp: "t".into(),
            hypothesis: "h".into(),
            change_summary: String::new(),
            issue_number: None,
            pr_number: None,
            score_before: None,
            score_after: score,
            delta: None,
            verdict,
            cost_usd: None,
            notes: String::new(),
            research_citations: vec![],
            gate: None,
            revert_cause: None,
            commit: None,
            forgotten_at: None,
        }
    }

    #[test]
    fn marks_keeps_and_reverts_and_skips_unscored() {
        assert_eq!(score_chart(&[record(1, Verdict::Error, None)]), None);
        let svg = score_chart(&[
            record(1, Verdict::Keep, Some(0.5)),
            record(2, Verdict::Revert, Some(0.4)),
            record(3, Verdict::Error, None),
            record(4, Verdict::Quarantined, Some(f64::NAN)),
        ])
        .unwrap();
        assert_eq!(svg.matches("<circle class=\"keep\"").count(), 1);
        assert_eq!(svg.matches("class=\"revert\"").count(), 1);
        assert!(!svg.contains("NaN"), "{svg}");
    }
}
