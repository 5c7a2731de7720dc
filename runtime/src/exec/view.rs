//! What a person (or a program) sees of a run: on a terminal a live view of the nodes
//! running, off a terminal one plain line per event, with `--json` the events
//! themselves on stdout.

use crate::sys::redact::redact;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::events::{Event, EventData};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewMode {
    Live,
    Plain,
    Json,
    Quiet,
}

pub struct View {
    mode: ViewMode,
    started: Instant,
    bars: BTreeMap<String, ProgressBar>,
    multi: Option<MultiProgress>,
}

impl View {
    pub fn new(mode: ViewMode) -> Self {
        let multi = (mode == ViewMode::Live).then(MultiProgress::new);
        Self {
            mode,
            started: Instant::now(),
            bars: BTreeMap::new(),
            multi,
        }
    }

    pub fn event(&mut self, ev: &Event) {
        match self.mode {
            ViewMode::Quiet => {}
            ViewMode::Json => {
                if let Ok(line) = serde_json::to_string(ev) {
                    println!("{}", redact(&line));
                }
            }
            ViewMode::Plain => eprintln!("{}", self.line(ev)),
            ViewMode::Live => self.live(ev),
        }
    }

    /// One line for an event: elapsed time, type, node and what matters about it
    /// (redacted: a failure's reason may quote an agent's output).
    fn line(&self, ev: &Event) -> String {
        redact(&self.raw_line(ev)).into_owned()
    }

    fn raw_line(&self, ev: &Event) -> String {
        let s = self.started.elapsed().as_secs();
        let fields = ev.fields();
        let get = |k: &str| {
            fields.get(k).map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
        };
        let mut line = format!(
            "[{:02}:{:02}:{:02}] {:<15}",
            s / 3600,
            s / 60 % 60,
            s % 60,
            ev.kind()
        );
        if let Some(node) = get("node") {
            line.push(' ');
            line.push_str(&node);
        }
        if let Some(v) = get("visit").filter(|v| v != "1") {
            line.push_str(&format!(" (visit {v})"));
        }
        if let Some(v) = get("verdict") {
            line.push_str(&format!(" → {v}"));
        }
        if let Some(r) = fields.get("result") {
            let status = r.get("status").and_then(|s| s.as_str()).unwrap_or("");
            if status == "failed" {
                let why = r.get("reason").and_then(|s| s.as_str()).unwrap_or("");
                line.push_str(&format!(" FAILED: {}", why.lines().next().unwrap_or("")));
            }
        }
        if let Some(ms) = fields.get("duration_ms").and_then(|v| v.as_u64()) {
            line.push_str(&format!(" ({:.1}s)", ms as f64 / 1000.0));
        }
        if let Some(o) = fields
            .get("outcome")
            .and_then(|o| o.get("outcome"))
            .and_then(|o| o.as_str())
        {
            line.push_str(&format!(" {o}"));
        }
        line
    }

    fn live(&mut self, ev: &Event) {
        let Some(multi) = self.multi.clone() else {
            return;
        };
        match &ev.data {
            EventData::NodeStarted { node, visit, .. } => {
                let bar = multi.add(ProgressBar::new_spinner());
                let style = ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner());
                bar.set_style(style);
                bar.set_message(if *visit > 1 {
                    format!("{node} (visit {visit})")
                } else {
                    node.clone()
                });
                bar.enable_steady_tick(Duration::from_millis(120));
                self.bars.insert(node.clone(), bar);
            }
            EventData::NodeFinished { node, .. } => {
                if let Some(bar) = self.bars.remove(node) {
                    bar.finish_and_clear();
                }
                let _ = multi.println(self.line(ev));
            }
            _ => {
                let _ = multi.println(self.line(ev));
            }
        }
    }

    pub fn clear(&mut self) {
        for (_, bar) in std::mem::take(&mut self.bars) {
            bar.finish_and_clear();
        }
    }
}
