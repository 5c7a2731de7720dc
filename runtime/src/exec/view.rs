//! What a person (or a program) sees of a run: on a terminal a live view of the nodes
//! running, off a terminal one plain line per event, with `--json` the events
//! themselves on stdout.

use crate::sys::redact::redact;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
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

/// The run's view; cheap to clone, so a parallel node's branches report to the same
/// screen as the run that started them.
#[derive(Clone)]
pub struct View {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    mode: ViewMode,
    started: Instant,
    bars: BTreeMap<String, ProgressBar>,
    multi: Option<MultiProgress>,
    /// Parallel branches by their run id: the label their lines carry.
    branches: BTreeMap<String, Branch>,
}

struct Branch {
    label: String,
    bar: Option<ProgressBar>,
}

impl View {
    pub fn new(mode: ViewMode) -> Self {
        let multi = (mode == ViewMode::Live).then(MultiProgress::new);
        Self {
            inner: Arc::new(Mutex::new(Inner {
                mode,
                started: Instant::now(),
                bars: BTreeMap::new(),
                multi,
                branches: BTreeMap::new(),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while printing must not silence the rest of the run.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn event(&self, ev: &Event) {
        self.lock().event(ev);
    }

    /// A parallel branch starts: its events are shown under `label` (on a terminal,
    /// as one line of its own with the node it runs and its elapsed time).
    pub fn branch_started(&self, run_id: &str, label: &str) {
        let mut inner = self.lock();
        let bar = inner.multi.clone().map(|multi| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(spinner_style());
            bar.set_message(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        inner.branches.insert(
            run_id.to_string(),
            Branch {
                label: label.to_string(),
                bar,
            },
        );
    }

    /// A parallel branch ended; `summary` says how (its status and score).
    pub fn branch_ended(&self, run_id: &str, summary: &str) {
        let mut inner = self.lock();
        let Some(branch) = inner.branches.get_mut(run_id) else {
            return;
        };
        let line = format!("{} {summary}", branch.label);
        match branch.bar.take() {
            Some(bar) => bar.finish_with_message(line),
            None if inner.mode == ViewMode::Plain => eprintln!("{}", redact(&line)),
            None => {}
        }
    }

    /// A line of its own (the branch table at the end of a parallel node).
    pub fn note(&self, text: &str) {
        let inner = self.lock();
        match inner.mode {
            ViewMode::Quiet | ViewMode::Json => {}
            ViewMode::Plain => eprintln!("{}", redact(text)),
            ViewMode::Live => {
                if let Some(multi) = &inner.multi {
                    let _ = multi.println(redact(text));
                }
            }
        }
    }

    pub fn clear(&self) {
        let mut inner = self.lock();
        for (_, bar) in std::mem::take(&mut inner.bars) {
            bar.finish_and_clear();
        }
        for branch in inner.branches.values_mut() {
            if let Some(bar) = branch.bar.take() {
                bar.finish_and_clear();
            }
        }
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl Inner {
    fn event(&mut self, ev: &Event) {
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

    /// The label of the branch an event belongs to, if it belongs to one.
    fn branch_of(&self, ev: &Event) -> Option<&Branch> {
        let fields = ev.fields();
        let run = fields.get("run_id")?.as_str()?;
        self.branches.get(run)
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
        if let Some(branch) = self.branch_of(ev) {
            line.push_str(&format!(" [{}]", branch.label));
        }
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
        if let Some(bar) = self.branch_of(ev).and_then(|b| b.bar.clone()) {
            // A branch keeps one line: its label and the node it runs now.
            if let EventData::NodeStarted { node, .. } = &ev.data
                && let Some(label) = self.branch_of(ev).map(|b| b.label.clone())
            {
                bar.set_message(format!("{label} · {node}"));
            }
            if matches!(
                ev.data,
                EventData::NodeFinished { .. } | EventData::NodeVerdict { .. }
            ) {
                let _ = multi.println(self.line(ev));
            }
            return;
        }
        match &ev.data {
            EventData::NodeStarted { node, visit, .. } => {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(spinner_style());
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
}
