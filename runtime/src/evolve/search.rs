//! The search (`factory evolve MODE --bench DIR`): MAP-Elites over workflow graphs.
//! Each generation first sweeps the int knobs of the best candidate one step each way
//! (a bound such as `qa_loops` is often the lever, and one random draw in thirty-two
//! would find it), then picks parents from the archive by tournament, mutates each with an
//! operator drawn by weight (operators whose children entered the archive gain
//! weight), scores every new candidate by really running it on the suite's training
//! projects (in parallel, up to `jobs`), and files it in the archive. A candidate whose
//! canonical hash was scored before is never run again. The search stops after its
//! generations, on a plateau, when the archive collapses to one cell, or when its time
//! budget is spent; then the best candidate is checked on the held-out projects. All
//! state lives in `.factory/evolve/`, saved after every generation, so a killed search
//! resumes; each generation's random source comes from the seed and its number, so the
//! same seed gives the same archive.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use factory_compiler::ir::{Ir, parse_text, to_text};
use serde::{Deserialize, Serialize};

use super::archive::{Archive, Elite, describe};
use super::bench::{BenchProject, Suite};
use super::evaluate::{ProjectResult, evaluate};
use super::{EvolveError, Op, Rules, Source, canonical_hash, generate};
use crate::sys::files::atomic_write;

/// What the knob sweep's children are credited to (it is not a drawn operator, so it
/// takes no part in the operators' weights).
pub const KNOB_SWEEP: &str = "KNOB_SWEEP";

/// How a search runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The mode searched from (its name, for reports).
    pub mode: String,
    pub seed: u64,
    pub generations: u32,
    /// Children per generation.
    pub population: usize,
    /// Generations without a better best before stopping.
    pub plateau: u32,
    /// Wall-time budget in minutes, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_minutes: Option<f64>,
    /// Agent-cost budget in US dollars (what the runners report), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
}

/// `.factory/evolve/search.json`: where the search is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub settings: Settings,
    /// The seed mode's canonical hash and the suite's signature: a resume needs both
    /// unchanged.
    pub seed_hash: String,
    pub suite: String,
    /// The next generation to run.
    pub next_generation: u32,
    /// Operator weights (the strategy learns which operators produce survivors).
    pub weights: BTreeMap<String, f64>,
    /// Why it stopped, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Per-operator counts of what the generator did, summed.
    #[serde(default)]
    pub discarded: BTreeMap<String, usize>,
    /// What the candidates' agents cost so far, in US dollars (as their runners report).
    #[serde(default)]
    pub spent_usd: f64,
}

/// One generation's line in `generations.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationStats {
    pub generation: u32,
    pub best: f64,
    pub mean: f64,
    pub cells: usize,
    pub evaluated: usize,
    pub cache_hits: usize,
    pub seconds: f64,
}

/// The fitness cache: a canonical hash to its results on each project.
pub type Cache = BTreeMap<String, BTreeMap<String, ProjectResult>>;

/// The files of a search under `.factory/evolve/`.
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    pub fn new(project: &Path) -> Store {
        Store {
            dir: project.join(".factory").join("evolve"),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    pub fn candidate_path(&self, hash: &str) -> PathBuf {
        self.dir
            .join("candidates")
            .join(format!("{}.fwir", short(hash)))
    }
    pub(super) fn load<T: for<'de> Deserialize<'de>>(
        &self,
        name: &str,
    ) -> Result<Option<T>, EvolveError> {
        let path = self.path(name);
        crate::sys::files::read_json(&path).map_err(|e| EvolveError::State {
            why: e.to_string(),
            path,
        })
    }
    pub(super) fn save<T: Serialize>(&self, name: &str, value: &T) -> Result<(), EvolveError> {
        let path = self.path(name);
        let json = serde_json::to_vec_pretty(value).map_err(|e| EvolveError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        std::fs::create_dir_all(&self.dir).map_err(|e| EvolveError::State {
            path: self.dir.clone(),
            why: e.to_string(),
        })?;
        atomic_write(&path, &json).map_err(|e| EvolveError::State {
            path,
            why: e.to_string(),
        })
    }
    pub fn state(&self) -> Result<Option<State>, EvolveError> {
        self.load("search.json")
    }
    pub fn archive(&self) -> Result<Archive, EvolveError> {
        Ok(self.load("archive.json")?.unwrap_or_default())
    }
    pub fn cache(&self) -> Result<Cache, EvolveError> {
        Ok(self.load("cache.json")?.unwrap_or_default())
    }
    pub fn generations(&self) -> Vec<GenerationStats> {
        std::fs::read_to_string(self.path("generations.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
    fn append_generation(&self, g: &GenerationStats) -> Result<(), EvolveError> {
        let path = self.path("generations.jsonl");
        let mut line = serde_json::to_string(g).unwrap_or_default();
        line.push('\n');
        crate::sys::files::append(&path, line.as_bytes()).map_err(|e| EvolveError::State {
            path,
            why: e.to_string(),
        })
    }
    /// The IR of a candidate kept under its hash.
    pub fn candidate(&self, hash: &str) -> Result<Ir, EvolveError> {
        let path = self.candidate_path(hash);
        let text = std::fs::read_to_string(&path).map_err(|e| EvolveError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        parse_text(&text)
            .map(|(ir, _)| ir)
            .map_err(|e| EvolveError::State {
                path,
                why: format!("{e:?}"),
            })
    }
    fn keep_candidate(&self, hash: &str, ir: &Ir) -> Result<(), EvolveError> {
        let path = self.candidate_path(hash);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| EvolveError::State {
                path: dir.to_path_buf(),
                why: e.to_string(),
            })?;
        }
        atomic_write(&path, to_text(ir).as_bytes()).map_err(|e| EvolveError::State {
            path,
            why: e.to_string(),
        })
    }
}

/// The first 16 hex digits of a hash: a candidate's id in files and reports.
pub fn short(hash: &str) -> &str {
    hash.get(..16).unwrap_or(hash)
}

/// What a finished search reports.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub seed: Elite,
    pub best: Elite,
    pub cells: usize,
    pub evaluated: usize,
    pub cache_hits: usize,
    pub stopped: String,
    /// The held-out check: the seed's and the best's mean gain there.
    pub holdout_seed: Option<f64>,
    pub holdout_best: Option<f64>,
    /// The best won on training but not on the held-out projects: not to be promoted.
    pub overfit: bool,
    /// The candidates registered as ephemeral modes (better than the seed, best first).
    pub registered: Vec<String>,
    /// What the candidates' agents cost over the whole search, in US dollars.
    pub spent_usd: f64,
}

/// How many candidates a search registers as modes at most.
pub const REGISTER_AT_MOST: usize = 5;

/// What scoring runs with: the `factory` binary that runs candidates, how many at a
/// time, the optional agent to ask while mutating, and where progress lines go.
pub struct Tools<'a> {
    pub factory: &'a Path,
    pub jobs: usize,
    pub hook: Option<&'a dyn super::Suggest>,
    pub say: &'a (dyn Fn(&str) + Sync),
}

/// Runs (or resumes) a search from `seed` on `suite`.
pub fn run(
    project: &Path,
    seed: &Ir,
    suite: &Suite,
    settings: &Settings,
    tools: &Tools,
) -> Result<Outcome, EvolveError> {
    let Tools {
        factory,
        jobs,
        hook,
        say,
    } = *tools;
    let store = Store::new(project);
    let seed_hash = canonical_hash(seed);
    let mut state = match store.state()? {
        Some(s)
            if s.settings == *settings
                && s.seed_hash == seed_hash
                && s.suite == suite.signature() =>
        {
            say(&format!("resuming at generation {}", s.next_generation));
            s
        }
        Some(_) => {
            return Err(EvolveError::OtherSearch {
                dir: store.dir.clone(),
            });
        }
        None => State {
            settings: settings.clone(),
            seed_hash: seed_hash.clone(),
            suite: suite.signature(),
            next_generation: 0,
            weights: Op::ALL.iter().map(|op| (op.to_string(), 1.0)).collect(),
            stopped: None,
            discarded: BTreeMap::new(),
            spent_usd: 0.0,
        },
    };
    let mut archive = store.archive()?;
    let mut cache = store.cache()?;
    let rules = Rules::near(project);
    let started = Instant::now();
    let scratch = store.dir.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| EvolveError::State {
        path: scratch.clone(),
        why: e.to_string(),
    })?;
    let train = suite.train();
    let mut evaluated = 0usize;
    let mut hits = 0usize;
    if state.next_generation == 0 {
        store.keep_candidate(&seed_hash, seed)?;
        let results = score_all(
            &[(seed_hash.clone(), seed.clone())],
            &train,
            &cache,
            jobs,
            factory,
            &scratch,
            say,
        );
        evaluated += results.len();
        state.spent_usd += cost(&results);
        merge(&mut cache, results);
        archive.insert(seed_elite(&cache, &seed_hash, seed, &train));
        state.next_generation = 1;
        // The seed alone may spend the budget.
        state.stopped = stop_reason(&store, settings, &state, &archive, true, started);
        save(&store, &state, &archive, &cache)?;
        store.append_generation(&stats(0, &archive, 1, 0, started))?;
    }
    while state.stopped.is_none() && state.next_generation <= settings.generations {
        let generation = state.next_generation;
        let gen_start = Instant::now();
        let mut src =
            Source::new(settings.seed ^ u64::from(generation).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        if let Some(h) = hook {
            src = src.with_hook(h);
        }
        let before = archive.best().map(|e| e.fitness).unwrap_or(f64::MIN);
        // First the knob neighbourhood of the best so far (cheap, and where a bound is
        // the lever a single random draw finds rarely), then the children: a
        // tournament parent each, an operator by weight.
        let mut children: Vec<(String, Ir, Option<Op>, String)> = Vec::new();
        if let Some(best) = archive.best().cloned() {
            let best_ir = store.candidate(&best.hash)?;
            let baseline = rules.warnings(&best_ir);
            for ir in super::params::knob_neighbours(&best_ir) {
                let hash = canonical_hash(&ir);
                if rules.accepts(&ir, &baseline) && !children.iter().any(|(h, ..)| *h == hash) {
                    children.push((hash, ir, None, best.hash.clone()));
                }
            }
        }
        for _ in 0..settings.population {
            let Some(parent) = tournament(&archive, &mut src) else {
                break;
            };
            let parent_ir = store.candidate(&parent.hash)?;
            let op = weighted(&state.weights, &mut src);
            let made = generate(&parent_ir, &[op], 1, &rules, &mut src);
            for (o, s) in &made.stats {
                *state.discarded.entry(o.to_string()).or_default() += s.discarded_invalid;
            }
            if let Some(c) = made.candidates.into_iter().next()
                && !children.iter().any(|(h, ..)| *h == c.hash)
            {
                children.push((c.hash, c.ir, Some(op), parent.hash.clone()));
            }
        }
        let fresh: Vec<(String, Ir)> = children
            .iter()
            .filter(|(h, ..)| !cache.contains_key(h))
            .map(|(h, ir, ..)| (h.clone(), ir.clone()))
            .collect();
        let gen_hits = children.len() - fresh.len();
        hits += gen_hits;
        for (h, ir) in &fresh {
            store.keep_candidate(h, ir)?;
        }
        let results = score_all(&fresh, &train, &cache, jobs, factory, &scratch, say);
        evaluated += fresh.len();
        state.spent_usd += cost(&results);
        merge(&mut cache, results);
        for (hash, ir, op, parent) in &children {
            let elite = Elite {
                hash: hash.clone(),
                fitness: fitness(&cache, hash, &train),
                descriptor: describe(ir),
                generation,
                op: Some(op.map_or_else(|| KNOB_SWEEP.to_string(), |o| o.to_string())),
                parent: Some(parent.clone()),
            };
            if archive.insert(elite)
                && let Some(op) = op
            {
                *state.weights.entry(op.to_string()).or_insert(1.0) += 1.0;
            }
        }
        let g = GenerationStats {
            seconds: gen_start.elapsed().as_secs_f64(),
            ..stats(generation, &archive, fresh.len(), gen_hits, gen_start)
        };
        say(&format!(
            "generation {generation}: best {:.4}, {} cells, {} evaluated, {} from the cache",
            g.best, g.cells, g.evaluated, g.cache_hits
        ));
        store.append_generation(&g)?;
        state.next_generation += 1;
        let after = archive.best().map(|e| e.fitness).unwrap_or(f64::MIN);
        state.stopped = if state.next_generation > settings.generations {
            Some(format!("{} generations", settings.generations))
        } else {
            stop_reason(&store, settings, &state, &archive, after > before, started)
        };
        save(&store, &state, &archive, &cache)?;
    }
    if state.stopped.is_none() {
        state.stopped = Some(format!("{} generations", settings.generations));
        save(&store, &state, &archive, &cache)?;
    }
    let best = archive.best().cloned().ok_or(EvolveError::NothingScored)?;
    let seed_elite = seed_elite(&cache, &seed_hash, seed, &train);
    // The held-out check: the seed and the best, on projects the search never scored.
    let holdout = suite.holdout();
    let (holdout_seed, holdout_best) = if holdout.is_empty() {
        (None, None)
    } else {
        let mut pairs = vec![(seed_hash.clone(), seed.clone())];
        if best.hash != seed_hash {
            pairs.push((best.hash.clone(), store.candidate(&best.hash)?));
        }
        let results = score_all(&pairs, &holdout, &cache, jobs, factory, &scratch, say);
        merge(&mut cache, results);
        store.save("cache.json", &cache)?;
        (
            Some(fitness(&cache, &seed_hash, &holdout)),
            Some(fitness(&cache, &best.hash, &holdout)),
        )
    };
    let overfit = match (holdout_seed, holdout_best) {
        (Some(s), Some(b)) => best.fitness > seed_elite.fitness && b <= s,
        _ => false,
    };
    let _ = std::fs::remove_dir_all(&scratch);
    let mut better: Vec<&Elite> = archive
        .elites()
        .into_iter()
        .filter(|e| e.fitness > seed_elite.fitness)
        .collect();
    better.sort_by(|a, b| b.fitness.total_cmp(&a.fitness).then(a.hash.cmp(&b.hash)));
    let mut registered = Vec::new();
    for e in better.into_iter().take(REGISTER_AT_MOST) {
        registered.push(super::modes::register(
            project,
            e,
            &store.candidate(&e.hash)?,
        )?);
    }
    Ok(Outcome {
        seed: seed_elite,
        best,
        cells: archive.cells.len(),
        evaluated,
        cache_hits: hits,
        stopped: state.stopped.clone().unwrap_or_default(),
        holdout_seed,
        holdout_best,
        overfit,
        registered,
        spent_usd: state.spent_usd,
    })
}

/// The seed as an elite of generation 0, with its cached fitness.
fn seed_elite(cache: &Cache, hash: &str, seed: &Ir, train: &[&BenchProject]) -> Elite {
    Elite {
        hash: hash.to_string(),
        fitness: fitness(cache, hash, train),
        descriptor: describe(seed),
        generation: 0,
        op: None,
        parent: None,
    }
}

fn save(store: &Store, state: &State, archive: &Archive, cache: &Cache) -> Result<(), EvolveError> {
    store.save("cache.json", cache)?;
    store.save("archive.json", archive)?;
    store.save("search.json", state)
}

fn stats(
    generation: u32,
    archive: &Archive,
    evaluated: usize,
    hits: usize,
    start: Instant,
) -> GenerationStats {
    let fits: Vec<f64> = archive.cells.values().map(|e| e.fitness).collect();
    GenerationStats {
        generation,
        best: archive.best().map_or(0.0, |e| e.fitness),
        mean: if fits.is_empty() {
            0.0
        } else {
            fits.iter().sum::<f64>() / fits.len() as f64
        },
        cells: archive.cells.len(),
        evaluated,
        cache_hits: hits,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Why the search stops after this generation, if it does.
fn stop_reason(
    store: &Store,
    settings: &Settings,
    state: &State,
    archive: &Archive,
    improved: bool,
    started: Instant,
) -> Option<String> {
    if let Some(budget) = settings.max_cost
        && state.spent_usd >= budget
    {
        return Some(format!(
            "agent-cost budget of ${budget:.2} spent (${:.4})",
            state.spent_usd
        ));
    }
    if let Some(m) = settings.max_minutes
        && started.elapsed().as_secs_f64() > m * 60.0
    {
        return Some(format!("time budget of {m} minutes spent"));
    }
    let history = store.generations();
    let plateau = settings.plateau as usize;
    if !improved && plateau > 0 && history.len() > plateau {
        let recent = &history[history.len() - plateau - 1..];
        if recent.windows(2).all(|w| w[1].best <= w[0].best) {
            return Some(format!(
                "plateau: no better candidate in {plateau} generations"
            ));
        }
    }
    if history.len() >= 3 && archive.cells.len() <= 1 {
        return Some("diversity collapsed: every candidate fell in one cell".into());
    }
    None
}

/// A parent by tournament: the fittest of three elites drawn at random.
fn tournament(archive: &Archive, src: &mut Source) -> Option<Elite> {
    let elites = archive.elites();
    let mut best: Option<&Elite> = None;
    for _ in 0..3 {
        let e = *src.pick(&elites)?;
        if best.is_none_or(|b| e.fitness > b.fitness) {
            best = Some(e);
        }
    }
    best.cloned()
}

/// An operator drawn in proportion to its weight.
fn weighted(weights: &BTreeMap<String, f64>, src: &mut Source) -> Op {
    let total: f64 = Op::ALL
        .iter()
        .map(|op| weights.get(&op.to_string()).copied().unwrap_or(1.0))
        .sum();
    // A whole-number draw keeps the sequence exact across platforms.
    let mut pick = src.below(((total * 1000.0) as usize).max(1)) as f64 / 1000.0;
    for op in Op::ALL {
        let w = weights.get(&op.to_string()).copied().unwrap_or(1.0);
        if pick < w {
            return op;
        }
        pick -= w;
    }
    Op::ALL[Op::ALL.len() - 1]
}

/// The mean gain of `hash` over `projects`, from the cache (a missing result counts 0).
pub fn fitness(cache: &Cache, hash: &str, projects: &[&BenchProject]) -> f64 {
    if projects.is_empty() {
        return 0.0;
    }
    let results = cache.get(hash);
    let sum: f64 = projects
        .iter()
        .map(|p| results.and_then(|r| r.get(&p.name)).map_or(0.0, |r| r.gain))
        .sum();
    // `+ 0.0` turns a -0.0 into 0.0, so reports never show "-0.0000".
    ((sum / projects.len() as f64) * 1e6).round() / 1e6 + 0.0
}

/// What the agents of these runs cost, in US dollars (unknown costs count nothing).
fn cost(results: &[(String, ProjectResult)]) -> f64 {
    results
        .iter()
        .filter_map(|(_, r)| r.cycle.usage.cost_usd)
        .sum::<f64>()
        + 0.0 // an empty sum is -0.0
}

pub(super) fn merge(cache: &mut Cache, results: Vec<(String, ProjectResult)>) {
    for (hash, r) in results {
        cache.entry(hash).or_default().insert(r.project.clone(), r);
    }
}

/// Scores each candidate on each project it has no cached result for, `jobs` at a time.
pub(super) fn score_all(
    candidates: &[(String, Ir)],
    projects: &[&BenchProject],
    cache: &Cache,
    jobs: usize,
    factory: &Path,
    scratch: &Path,
    say: &(dyn Fn(&str) + Sync),
) -> Vec<(String, ProjectResult)> {
    let work: Vec<(String, String, &BenchProject)> = candidates
        .iter()
        .flat_map(|(hash, ir)| {
            let text = to_text(ir);
            projects
                .iter()
                .filter(|p| !cache.get(hash).is_some_and(|r| r.contains_key(&p.name)))
                .map(move |p| (hash.clone(), text.clone(), *p))
                .collect::<Vec<_>>()
        })
        .collect();
    let queue = Mutex::new(work.into_iter().enumerate().collect::<Vec<_>>());
    let done: Mutex<Vec<(usize, String, ProjectResult)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop();
                    let Some((i, (hash, text, project))) = next else {
                        break;
                    };
                    let r = evaluate(&text, project, factory, scratch);
                    say(&format!(
                        "  {} on {}: {} (gain {:.4}, {:.1}s)",
                        short(&hash),
                        project.name,
                        r.verdict.as_deref().unwrap_or(&r.outcome),
                        r.gain,
                        r.seconds
                    ));
                    done.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, hash, r));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, ..)| *i);
    done.into_iter().map(|(_, h, r)| (h, r)).collect()
}
