//! `/p/N/run/ID`: a run live — the mode's graph with each node coloured by its state,
//! the current gate's question and verdict, elapsed times; the page's script applies
//! the updates of `/p/N/run/ID/events` from the offset it was rendered at.

use std::path::Path;

use factory_compiler::ir::Ir;
use factory_runtime::exec::checkpoint::run_dir;
use factory_runtime::project::layout::FactoryPaths;

use super::super::graph;
use super::super::layout::{degraded, duration_ms, esc, page as shell};
use super::super::live::Follower;
use super::name_of;

/// The run's IR as it was run (`runs/ID/workflow.fwir`), or why it cannot be had.
pub fn run_ir(project: &Path, run_id: &str) -> Result<Ir, String> {
    let file = run_dir(&FactoryPaths::new(project), run_id).join("workflow.fwir");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    factory_compiler::ir::parse_text(&text)
        .map(|(ir, _)| ir)
        .map_err(|_| format!("{} is not a readable workflow IR", file.display()))
}

/// Whether `run_id` can name a run directory (no path tricks).
pub fn valid_run_id(run_id: &str) -> bool {
    !run_id.is_empty()
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !run_id.starts_with('.')
}

pub fn page(index: usize, project: &Path, run_id: &str) -> String {
    let name = name_of(project);
    let run_href = format!("/p/{index}/run/{run_id}");
    let project_href = format!("/p/{index}/");
    let crumbs: [(&str, &str); 2] = [(&name, &project_href), (run_id, &run_href)];
    let ir = run_ir(project, run_id);
    let mut follower = Follower::new(
        &FactoryPaths::new(project).events_jsonl(),
        run_id,
        ir.as_ref().ok().cloned(),
    );
    let mut notices = String::new();
    if let Err(e) = follower.catch_up() {
        notices.push_str(&degraded(
            "events",
            &format!("cannot read events.jsonl: {e}"),
        ));
    }
    if follower.corrupt_lines > 0 {
        notices.push_str(&degraded(
            "events",
            &format!(
                "unreadable lines in events.jsonl skipped: {}",
                follower.corrupt_lines
            ),
        ));
    }
    let p = &follower.progress;
    if p.status == "unknown" && ir.is_err() {
        return shell(
            &format!("Run {run_id}"),
            &crumbs,
            &format!(
                "{notices}{}",
                degraded("run", "no such run in this project")
            ),
        );
    }
    let workflow = ir
        .as_ref()
        .map(|ir| ir.workflow.name.clone())
        .unwrap_or_default();
    let mut body = format!(
        "<div id=\"live\" data-src=\"{run_href}/events?from={from}\" data-over=\"{over}\"></div>\
         <p class=\"runhead\">workflow <strong>{wf}</strong> · status <span id=\"run-status\" class=\"tag s-{st}\">{st}</span> \
         · started <span id=\"run-started\" class=\"muted\">{started}</span> · elapsed \
         <span id=\"run-elapsed\" class=\"clock\" data-since=\"{started}\" data-until=\"{ended}\"></span></p>\
         <div id=\"notices\">{notices}</div>",
        from = follower.offset(),
        over = follower.is_over(),
        wf = esc(&workflow),
        st = esc(&p.status),
        started = esc(p.started_at.as_deref().unwrap_or("")),
        ended = esc(p.ended_at.as_deref().unwrap_or("")),
    );
    body.push_str(&gate_panel(&follower));
    match &ir {
        Ok(ir) => body.push_str(&format!(
            "<div class=\"graphbox\">{}</div>",
            graph::svg(ir, p)
        )),
        Err(why) => body.push_str(&degraded("graph", why)),
    }
    body.push_str(
        "<h2>Nodes</h2><table id=\"nodes\"><thead><tr><th>node</th><th>state</th><th>visits</th>\
         <th>elapsed</th><th>verdict</th></tr></thead><tbody>",
    );
    let ids: Vec<String> = match &ir {
        Ok(ir) => graph::in_layout_order(ir),
        Err(_) => p.nodes.keys().cloned().collect(),
    };
    for id in ids {
        let n = p.node(&id);
        let elapsed = n.duration_ms.map(duration_ms).unwrap_or_default();
        body.push_str(&format!(
            "<tr data-row=\"{id}\" data-state=\"{st}\"><td>{id}</td><td class=\"state\">{st}</td>\
             <td class=\"visits\">{v}</td><td class=\"elapsed clock\" data-since=\"{since}\">{elapsed}</td>\
             <td class=\"verdict\">{verdict}</td></tr>",
            id = esc(&id),
            st = n.state.as_str(),
            v = n.visits,
            since = if n.state.as_str() == "running" { esc(n.started_at.as_deref().unwrap_or("")) } else { String::new() },
            verdict = esc(n.verdict.as_deref().unwrap_or("")),
        ));
    }
    body.push_str("</tbody></table>");
    shell(&format!("Run {run_id}"), &crumbs, &body)
}

fn gate_panel(follower: &Follower) -> String {
    let inner = match follower.gate() {
        Some(g) => format!(
            "<strong class=\"g-node\">{}</strong> <span class=\"g-question\">{}</span> \
             <span class=\"g-verdict tag\">{}</span>",
            esc(g["node"].as_str().unwrap_or("")),
            esc(g["question"].as_str().unwrap_or("")),
            esc(g["verdict"].as_str().unwrap_or("waiting")),
        ),
        None => "<span class=\"muted\">no gate reached yet</span>".into(),
    };
    format!(
        "<div id=\"gate\" class=\"gate\"><span class=\"muted\">current gate</span> {inner}</div>"
    )
}
