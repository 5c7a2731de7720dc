//! `factory evolve report`: a search as it stands, read from `.factory/evolve/` — its
//! settings and why it stopped, the fitness per generation, the archive's cells, and
//! the best candidate's graph against the seed's (nodes and edges added, removed,
//! changed), as text or as a mermaid or dot picture of the best with the diff on top.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use factory_compiler::ir::{Edge, Ir, Literal, Node};

use super::EvolveError;
use super::search::{Store, short};

/// What changed from one graph to another, by node id and edge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphDiff {
    pub nodes_added: Vec<String>,
    pub nodes_removed: Vec<String>,
    /// Nodes whose kind or attributes differ.
    pub nodes_changed: Vec<String>,
    pub edges_added: Vec<String>,
    pub edges_removed: Vec<String>,
    /// Knobs whose value or bounds differ: `name: old → new`.
    pub knobs_changed: Vec<String>,
}

impl GraphDiff {
    pub fn is_empty(&self) -> bool {
        *self == GraphDiff::default()
    }

    /// One line per change, `+`, `-` or `~` first.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (mark, what, items) in [
            ('+', "node", &self.nodes_added),
            ('-', "node", &self.nodes_removed),
            ('~', "node", &self.nodes_changed),
            ('+', "edge", &self.edges_added),
            ('-', "edge", &self.edges_removed),
            ('~', "knob", &self.knobs_changed),
        ] {
            out.extend(items.iter().map(|i| format!("{mark} {what} {i}")));
        }
        out
    }
}

fn edge_text(e: &Edge) -> String {
    let mut t = format!("{} -> {}", e.from, e.to);
    if let Some(l) = e.label {
        t.push_str(&format!(" {l}"));
    }
    if let Some(m) = e.max {
        t.push_str(&format!(" max={m}"));
    }
    t
}

/// The diff from `from` to `to`.
pub fn diff(from: &Ir, to: &Ir) -> GraphDiff {
    let nodes = |ir: &Ir| -> BTreeMap<String, Node> {
        ir.nodes.iter().map(|n| (n.id.clone(), n.clone())).collect()
    };
    let (a, b) = (nodes(from), nodes(to));
    let mut d = GraphDiff::default();
    for (id, n) in &b {
        match a.get(id) {
            None => d.nodes_added.push(id.clone()),
            Some(old) if old != n => d.nodes_changed.push(id.clone()),
            Some(_) => {}
        }
    }
    d.nodes_removed = a
        .keys()
        .filter(|id| !b.contains_key(*id))
        .cloned()
        .collect();
    let edges = |ir: &Ir| -> Vec<String> {
        let mut e: Vec<String> = ir.edges.iter().map(edge_text).collect();
        e.sort();
        e
    };
    let (ea, eb) = (edges(from), edges(to));
    d.edges_added = eb.iter().filter(|e| !ea.contains(e)).cloned().collect();
    d.edges_removed = ea.iter().filter(|e| !eb.contains(e)).cloned().collect();
    for k in &to.knobs {
        match from.knobs.iter().find(|o| o.name == k.name) {
            Some(o) if o != k => d.knobs_changed.push(format!(
                "{}: {} → {}",
                k.name,
                literal(&o.default),
                literal(&k.default)
            )),
            None => d
                .knobs_changed
                .push(format!("{}: new, {}", k.name, literal(&k.default))),
            _ => {}
        }
    }
    d
}

fn literal(l: &Literal) -> String {
    match l {
        Literal::Bool(b) => b.to_string(),
        Literal::Int(i) => i.to_string(),
        Literal::Str(s) => format!("{s:?}"),
        Literal::Float(f) => f.value().map_or("?".into(), |v| v.to_string()),
    }
}

/// The picture a report may be drawn as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picture {
    Text,
    Mermaid,
    Dot,
}

/// The report of the search kept in `project`'s `.factory/evolve/`.
pub fn render(project: &Path, picture: Picture) -> Result<String, EvolveError> {
    let store = Store::new(project);
    let state = store.state()?.ok_or_else(|| EvolveError::State {
        path: store.dir.join("search.json"),
        why: "there is no search here yet (run `factory evolve MODE --bench DIR`)".into(),
    })?;
    let archive = store.archive()?;
    let best = archive.best().cloned().ok_or(EvolveError::NothingScored)?;
    let seed_ir = store.candidate(&state.seed_hash)?;
    let best_ir = store.candidate(&best.hash)?;
    let changes = diff(&seed_ir, &best_ir);
    let mut out = String::new();
    match picture {
        Picture::Mermaid | Picture::Dot => {
            let comment = if picture == Picture::Mermaid {
                "%%"
            } else {
                "//"
            };
            let _ = writeln!(
                out,
                "{comment} best candidate {} (fitness {:.4}) against the seed {}:",
                short(&best.hash),
                best.fitness,
                short(&state.seed_hash)
            );
            for line in changes.lines() {
                let _ = writeln!(out, "{comment} {line}");
            }
            out.push_str(&match picture {
                Picture::Mermaid => factory_compiler::emit::to_mermaid(&best_ir),
                _ => factory_compiler::emit::to_dot(&best_ir),
            });
            return Ok(out);
        }
        Picture::Text => {}
    }
    let s = &state.settings;
    let _ = writeln!(
        out,
        "search of {} (seed {}, {} generations of {}): {}",
        s.mode,
        s.seed,
        s.generations,
        s.population,
        state
            .stopped
            .as_deref()
            .unwrap_or("still running, or killed")
    );
    let _ = writeln!(out, "\nfitness per generation (best, mean of the cells):");
    let gens = store.generations();
    let top = gens
        .iter()
        .map(|g| g.best)
        .fold(0.0_f64, f64::max)
        .max(1e-9);
    for g in &gens {
        let bar = "#".repeat(((g.best / top) * 30.0).round() as usize);
        let _ = writeln!(
            out,
            "  {:>3}  {:.4}  {:.4}  {:>3} cells  {:>3} run  {:>3} cached  {bar}",
            g.generation, g.best, g.mean, g.cells, g.evaluated, g.cache_hits
        );
    }
    out.push_str(&grid(&archive.elites()));
    let _ = writeln!(
        out,
        "\narchive ({} cells, best first):",
        archive.cells.len()
    );
    let mut elites = archive.elites();
    elites.sort_by(|a, b| b.fitness.total_cmp(&a.fitness).then(a.hash.cmp(&b.hash)));
    for e in elites {
        let _ = writeln!(
            out,
            "  {:.4}  {}  gen {:<2} {:<13} {}",
            e.fitness,
            short(&e.hash),
            e.generation,
            e.op.as_deref().unwrap_or("seed"),
            e.descriptor.cell()
        );
    }
    let _ = writeln!(
        out,
        "\nbest {} ({:.4}) against the seed {}:",
        short(&best.hash),
        best.fitness,
        short(&state.seed_hash)
    );
    if changes.is_empty() {
        let _ = writeln!(out, "  the same graph");
    }
    for line in changes.lines() {
        let _ = writeln!(out, "  {line}");
    }
    Ok(out)
}

/// The archive as a grid: depth down, agent count across, each place the best fitness
/// of the cells that project onto it (fork degree, gates and knobs are the further
/// dimensions, listed cell by cell below the grid); `.` is a place no candidate reached.
pub fn grid(elites: &[&super::archive::Elite]) -> String {
    use std::collections::BTreeSet;
    let mut best: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for e in elites {
        let place = (e.descriptor.depth, e.descriptor.agents);
        let f = best.entry(place).or_insert(f64::MIN);
        *f = f.max(e.fitness);
    }
    let depths: BTreeSet<usize> = best.keys().map(|(d, _)| *d).collect();
    let agents: BTreeSet<usize> = best.keys().map(|(_, a)| *a).collect();
    let mut out = String::from("\narchive grid (best fitness; depth down, agents across):\n");
    let _ = write!(out, "  {:>7}", "depth");
    for a in &agents {
        let _ = write!(out, " {:>8}", format!("a{a}"));
    }
    out.push('\n');
    for d in &depths {
        let _ = write!(out, "  {d:>7}");
        for a in &agents {
            match best.get(&(*d, *a)) {
                Some(f) => {
                    let _ = write!(out, " {f:>8.4}");
                }
                None => {
                    let _ = write!(out, " {:>8}", ".");
                }
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use factory_compiler::ir::parse_text;

    fn ir(body: &str) -> Ir {
        parse_text(&format!("fwir 1\nworkflow t\n{body}"))
            .unwrap()
            .0
    }

    #[test]
    fn the_diff_names_what_was_added_removed_and_changed() {
        let a = ir(
            "knob n int default=3 min=1 max=5\nnode a fn run=\"x\"\nnode end end\nnode start start\nedge a -> end\nedge start -> a\n",
        );
        let b = ir(
            "knob n int default=4 min=1 max=5\nnode a fn run=\"y\"\nnode b fn run=\"z\"\nnode end end\nnode start start\nedge a -> b\nedge b -> end\nedge start -> a\n",
        );
        let d = diff(&a, &b);
        assert_eq!(d.nodes_added, ["b"]);
        assert_eq!(d.nodes_changed, ["a"]);
        assert_eq!(d.edges_added, ["a -> b", "b -> end"]);
        assert_eq!(d.edges_removed, ["a -> end"]);
        assert_eq!(d.knobs_changed, ["n: 3 → 4"]);
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn the_grid_keeps_the_best_of_the_cells_on_each_place_and_marks_empty_ones() {
        use super::super::archive::{Descriptor, Elite};
        let elite = |depth, agents, gates, fitness| Elite {
            hash: format!("{depth}{agents}{gates}"),
            fitness,
            descriptor: Descriptor {
                depth,
                fork_degree: 0,
                agents,
                gates,
                knobs: String::new(),
            },
            generation: 0,
            op: None,
            parent: None,
        };
        let cells = [
            elite(14, 12, 4, 0.1),
            elite(14, 12, 5, 0.3889),
            elite(15, 13, 4, 0.25),
        ];
        let text = grid(&cells.iter().collect::<Vec<_>>());
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert!(
            rows[0].split_whitespace().eq(["depth", "a12", "a13"]),
            "{text}"
        );
        assert!(
            rows[1].split_whitespace().eq(["14", "0.3889", "."]),
            "{text}"
        );
        assert!(
            rows[2].split_whitespace().eq(["15", ".", "0.2500"]),
            "{text}"
        );
    }
}
