//! `results.tsv`: a header line, then one tab-separated row per finalized experiment.
//!
//! Text fields are escaped (`\\`, `\t`, `\n`, `\r`) so a hypothesis with tabs or
//! newlines still occupies exactly one row; research citations are a JSON array.

use super::record::{ExperimentRecord, Verdict};

/// The column names, in order.
pub const COLUMNS: [&str; 13] = [
    "id",
    "timestamp",
    "verdict",
    "score_before",
    "score_after",
    "delta",
    "hypothesis",
    "change_summary",
    "issue_number",
    "pr_number",
    "cost_usd",
    "notes",
    "research_citations",
];

/// The header line, with its newline.
pub fn header() -> String {
    format!("{}\n", COLUMNS.join("\t"))
}

/// One record as a row, with its newline.
pub fn encode(r: &ExperimentRecord) -> String {
    let opt_f = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let opt_u = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_default();
    let citations = if r.research_citations.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&r.research_citations).unwrap_or_default()
    };
    let cells = [
        r.id.to_string(),
        escape(&r.timestamp),
        r.verdict.as_str().to_owned(),
        opt_f(r.score_before),
        opt_f(r.score_after),
        opt_f(r.delta),
        escape(&r.hypothesis),
        escape(&r.change_summary),
        opt_u(r.issue_number),
        opt_u(r.pr_number),
        opt_f(r.cost_usd),
        escape(&r.notes),
        escape(&citations),
    ];
    format!("{}\n", cells.join("\t"))
}

/// What [`decode`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// Rows that parsed, in file order.
    pub records: Vec<ExperimentRecord>,
    /// 1-based line numbers of rows that did not (wrong column count, bad number...).
    pub bad_lines: Vec<usize>,
}

/// Parses the whole file. The header line is skipped; bad rows are reported, not fatal.
pub fn decode(text: &str) -> Decoded {
    decode_bytes(text.as_bytes())
}

/// [`decode`] over raw bytes: a row that is not UTF-8 is a bad line like any other
/// unreadable row, never a reason to refuse the whole file.
pub fn decode_bytes(bytes: &[u8]) -> Decoded {
    let mut out = Decoded::default();
    let lines = bytes
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    for (i, raw) in lines.enumerate() {
        let Ok(line) = std::str::from_utf8(raw) else {
            out.bad_lines.push(i + 1);
            continue;
        };
        if line.is_empty() || (i == 0 && line.starts_with("id\t")) {
            continue;
        }
        match decode_row(line) {
            Some(r) => out.records.push(r),
            None => out.bad_lines.push(i + 1),
        }
    }
    out
}

fn decode_row(line: &str) -> Option<ExperimentRecord> {
    let cells: Vec<&str> = line.split('\t').collect();
    if cells.len() != COLUMNS.len() {
        return None;
    }
    let opt_f = |s: &str| -> Option<Option<f64>> {
        if s.is_empty() {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    };
    let opt_u = |s: &str| -> Option<Option<u64>> {
        if s.is_empty() {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    };
    let citations = unescape(cells[12]);
    Some(ExperimentRecord {
        id: cells[0].parse().ok()?,
        timestamp: unescape(cells[1]),
        verdict: cells[2].parse::<Verdict>().ok()?,
        score_before: opt_f(cells[3])?,
        score_after: opt_f(cells[4])?,
        delta: opt_f(cells[5])?,
        hypothesis: unescape(cells[6]),
        change_summary: unescape(cells[7]),
        issue_number: opt_u(cells[8])?,
        pr_number: opt_u(cells[9])?,
        cost_usd: opt_f(cells[10])?,
        notes: unescape(cells[11]),
        research_citations: if citations.is_empty() {
            Vec::new()
        } else {
            serde_json::from_str(&citations).ok()?
        },
        // Not columns: `verdict.json` and `forgotten.json` carry them.
        gate: None,
        revert_cause: None,
        commit: None,
        forgotten_at: None,
    })
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> ExperimentRecord {
        ExperimentRecord {
            id: 7,
            timestamp: "2026-11-29T10:00:00Z".into(),
            hypothesis: "tabs\there and\nnewlines \\ too".into(),
            change_summary: String::new(),
            issue_number: Some(12),
            pr_number: None,
            score_before: Some(0.1),
            score_after: Some(0.3),
            delta: Some(0.2),
            verdict: Verdict::Superseded,
            cost_usd: Some(1.25),
            notes: "n".into(),
            research_citations: vec!["a\tb".into(), "c".into()],
            gate: None,
            revert_cause: None,
            commit: None,
            forgotten_at: None,
        }
    }

    #[test]
    fn rows_round_trip_even_with_tabs_and_newlines() {
        let r = record();
        let text = format!("{}{}", header(), encode(&r));
        assert_eq!(text.lines().count(), 2);
        let decoded = decode(&text);
        assert!(decoded.bad_lines.is_empty());
        assert_eq!(decoded.records, vec![r]);
    }

    #[test]
    fn bad_rows_are_reported_not_fatal() {
        let text = format!("{}garbage\n{}7\tx\tkeep\n", header(), encode(&record()));
        let decoded = decode(&text);
        assert_eq!(decoded.records.len(), 1);
        assert_eq!(decoded.bad_lines, vec![2, 4]);
    }
}
