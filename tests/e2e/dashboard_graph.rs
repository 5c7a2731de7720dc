//! The run graph a user reads, checked in a browser on a real `parallel-improve` run:
//! every node that ran (in the run or in a branch, structural ones included) shows
//! done and nothing else does; every node shows its whole id inside its box; no edge
//! runs through a box it does not join; and every label sits on its own edge, crossed
//! by no other.

use crate::cdp;
use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::{Dashboard, Project, script_from};
use factory_runtime::events::EventData;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parallel");
const MODE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/workflows/parallel-improve.fwf"
);

/// What the page's graph gets wrong, as sentences (empty when nothing).
const PROBLEMS: &str = r#"(() => {
  const svg = document.querySelector('svg.graph');
  const boxes = {};
  for (const g of svg.querySelectorAll('g[data-node]')) {
    const r = g.querySelector('rect');
    boxes[g.dataset.node] = { x: +r.getAttribute('x'), y: +r.getAttribute('y'),
      w: +r.getAttribute('width'), h: +r.getAttribute('height') };
  }
  const inside = (b, p, pad) => p.x > b.x - pad && p.x < b.x + b.w + pad
    && p.y > b.y - pad && p.y < b.y + b.h + pad;
  const problems = [];
  const paths = [...svg.querySelectorAll('path[data-edge]')];
  const samples = new Map();
  for (const path of paths) {
    const [from, to] = path.dataset.edge.split('->');
    const len = path.getTotalLength();
    const pts = [];
    for (let d = 0; d <= len; d += 3) pts.push(path.getPointAtLength(d));
    samples.set(path, pts);
    for (const [id, b] of Object.entries(boxes)) {
      if (id !== from && id !== to && pts.some(p => inside(b, p, -1))) {
        problems.push(`edge ${path.dataset.edge} runs through the box of ${id}`);
      }
    }
  }
  for (const label of svg.querySelectorAll('text.elabel')) {
    const b = label.getBBox();
    const box = { x: b.x, y: b.y, w: b.width, h: b.height };
    const near = (path) => Math.min(...samples.get(path).map(p =>
      Math.hypot(Math.max(box.x - p.x, 0, p.x - box.x - box.w),
                 Math.max(box.y - p.y, 0, p.y - box.y - box.h))));
    const own = paths.find(p => p.dataset.edge === label.dataset.edge);
    if (!own) { problems.push(`label ${label.textContent} has no edge`); continue; }
    if (near(own) > 8) problems.push(`label ${label.textContent} is ${near(own).toFixed(0)}px from its edge ${label.dataset.edge}`);
    for (const other of paths) {
      if (other !== own && samples.get(other).some(p => inside(box, p, 0))) {
        problems.push(`edge ${other.dataset.edge} crosses the label ${label.textContent} of ${label.dataset.edge}`);
      }
    }
  }
  for (const g of svg.querySelectorAll('g[data-node]')) {
    const shown = [...g.querySelectorAll('text.scope, text.name')].map(t => t.textContent).join('');
    if (shown !== g.dataset.node) problems.push(`node ${g.dataset.node} shows "${shown}"`);
    const r = g.querySelector('rect').getBBox();
    for (const t of g.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.width > 0 && (b.x < r.x || b.x + b.width > r.x + r.width)) {
        problems.push(`"${t.textContent}" spills out of the box of ${g.dataset.node}`);
      }
    }
  }
  return JSON.stringify(problems);
})()"#;

#[test]
fn a_parallel_runs_graph_shows_what_ran_whole_ids_and_labels_on_their_edges() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::fixture(&Path::new(FIXTURE).join("project"), target.path());
    let script = p.path().join(".factory/script.yaml");
    std::fs::write(
        &script,
        script_from(&Path::new(FIXTURE).join("replay.yaml"), &[]),
    )
    .unwrap();
    let out = p.factory(&[
        "run",
        MODE,
        "--runner",
        "replay",
        "--script",
        script.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", support::output(&out));
    let run_id = std::fs::read_dir(p.path().join(".factory/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| !n.contains('.'))
        .unwrap();

    // What ran, from the log: nodes of the run and of its branches (`RUN.NODE-N`).
    let mut ran: BTreeSet<String> = BTreeSet::new();
    for e in p.events() {
        if let EventData::NodeFinished {
            run_id: r, node, ..
        } = &e.data
            && (*r == run_id || r.starts_with(&format!("{run_id}.")))
        {
            ran.insert(node.clone());
        }
    }
    let (fork, join, body_node, skipped) = (
        "branches.trial.qa.review.split",
        "branches.trial.qa.review.merged",
        "branches.trial.builder",
        "branches.discard",
    );
    assert!(ran.contains(body_node) && !ran.contains(skipped), "{ran:?}");

    let dash = Dashboard::start(&p);
    let mut browser = cdp::Browser::launch();
    let tab = browser.open(&format!("{}/p/0/run/{run_id}", dash.url));
    assert!(browser.wait_for(&tab, "!!document.querySelector('svg.graph')", 30));
    let states: BTreeMap<String, String> = serde_json::from_value(browser.eval(
        &tab,
        "Object.fromEntries([...document.querySelectorAll('g[data-node]')].map(g => [g.dataset.node, g.dataset.state]))",
    ))
    .unwrap();
    for node in [fork, join, body_node, "branches", "start", "end"] {
        assert_eq!(states[node], "done", "{node}: {states:?}");
    }
    for (node, state) in &states {
        let structural = node == fork || node == join || node == "start" || node == "end";
        let expected = if ran.contains(node) || structural {
            "done"
        } else {
            "pending"
        };
        assert_eq!(state, expected, "{node}");
    }
    // For a person to look at: target/dashboard-shots/parallel-run.png.
    let shots = std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .join("dashboard-shots");
    browser.screenshot(&tab, &shots.join("parallel-run.png"));
    let problems: Vec<String> =
        serde_json::from_str(browser.eval(&tab, PROBLEMS).as_str().unwrap()).unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
