//! JavaScript test frameworks: which one a checkout's package.json runs its tests with,
//! how to run it there (from the checkout's own `node_modules`, as `## Setup` installed
//! it) with a reporter factory can read, and that report as test identities.
//!
//! Ids are `file > describe > … > test` where the report names the file (mocha, jest,
//! vitest; the file relative to the checkout, so both sides agree), and the framework's
//! own title path otherwise (ava's `file › title`, tape's test names, `node --test`'s
//! `suite > case`).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::runners::{Outcome, TestRun, parse_tap};
use crate::sys::process::{Output, run_shell};

/// The JavaScript test framework a project's tests are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsFramework {
    /// node's built-in runner (`node --test`), and the fallback for test files with
    /// no framework declared.
    NodeTest,
    Mocha,
    Jest,
    Vitest,
    Ava,
    Tape,
}

impl JsFramework {
    /// Also the runner's name in `KnownTests` and in findings.
    pub fn name(self) -> &'static str {
        match self {
            JsFramework::NodeTest => "node --test",
            JsFramework::Mocha => "mocha",
            JsFramework::Jest => "jest",
            JsFramework::Vitest => "vitest",
            JsFramework::Ava => "ava",
            JsFramework::Tape => "tape",
        }
    }

    /// The npm package that provides it (none for node's own).
    fn package(self) -> Option<&'static str> {
        match self {
            JsFramework::NodeTest => None,
            other => Some(other.name()),
        }
    }

    /// Whether its ids start with the test's file.
    pub fn ids_name_files(self) -> bool {
        matches!(
            self,
            JsFramework::Mocha | JsFramework::Jest | JsFramework::Vitest
        )
    }

    /// The framework an executable's name stands for (`mocha`, `_mocha`, `jest`, …).
    fn of_bin(bin: &str) -> Option<Self> {
        Some(match bin {
            "mocha" | "_mocha" => JsFramework::Mocha,
            "jest" => JsFramework::Jest,
            "vitest" => JsFramework::Vitest,
            "ava" => JsFramework::Ava,
            "tape" => JsFramework::Tape,
            _ => return None,
        })
    }

    /// Options that change what is reported or stop a run early: replaced by factory's
    /// reporter, or dropped so every test runs once. `(flag, takes a value)`.
    fn dropped_options(self) -> &'static [(&'static str, bool)] {
        match self {
            JsFramework::Mocha => &[
                ("--reporter", true),
                ("-R", true),
                ("--reporter-option", true),
                ("--reporter-options", true),
                ("-O", true),
                ("--bail", false),
                ("-b", false),
                ("--watch", false),
                ("-w", false),
                ("--watch-files", true),
                ("--watch-ignore", true),
                ("--colors", false),
                ("--color", false),
                ("-c", false),
                ("--growl", false),
                ("-G", false),
            ],
            JsFramework::Jest => &[
                ("--json", false),
                ("--outputFile", true),
                ("--reporters", true),
                ("--coverage", false),
                ("--collectCoverage", false),
                ("--watch", false),
                ("--watchAll", false),
                ("--bail", false),
                ("-b", false),
                ("--onlyChanged", false),
                ("-o", false),
            ],
            JsFramework::Vitest => &[
                ("--reporter", true),
                ("--outputFile", true),
                ("--coverage", false),
                ("--watch", false),
                ("-w", false),
                ("--ui", false),
                ("--bail", true),
                ("--changed", false),
            ],
            JsFramework::Ava => &[
                ("--tap", false),
                ("-t", false),
                ("--verbose", false),
                ("-v", false),
                ("--watch", false),
                ("-w", false),
                ("--fail-fast", false),
            ],
            JsFramework::Tape | JsFramework::NodeTest => &[],
        }
    }
}

/// How the checkout's package.json runs its tests with a framework.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub framework: JsFramework,
    /// `NAME=value` words the script sets for it.
    pub env: Vec<String>,
    /// Its arguments, as shell words (quotes kept): files, globs, `--require`, ….
    pub args: Vec<String>,
    /// Started as `node <file>` (a tape suite that runs itself), not by its executable.
    pub via_node: bool,
    /// The `test` script is this one command and nothing else (no wrapper such as nyc,
    /// no second command): `npm test` runs the same suite with the same tool.
    pub plain: bool,
    /// Where it was read: the script's text, or the dependency that names it.
    pub source: String,
}

/// The checkout's package.json, when it has one that parses.
pub fn manifest(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn script<'a>(manifest: &'a Value, name: &str) -> Option<&'a str> {
    manifest.get("scripts")?.get(name)?.as_str()
}

fn declares(manifest: &Value, package: &str) -> bool {
    ["devDependencies", "dependencies"]
        .iter()
        .any(|k| manifest.get(k).and_then(|d| d.get(package)).is_some())
}

/// Shell words and the operators between commands (`&&`, `||`, `;`, `|`, `&`), quotes
/// kept in the words so they can be passed on as written.
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some('"'), '\\') => {
                cur.push(ch);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                cur.push(ch);
            }
            (None, '\\') => {
                cur.push(ch);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, '&' | '|' | ';') => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                let mut op = ch.to_string();
                if chars.peek() == Some(&ch) && ch != ';' {
                    chars.next();
                    op.push(ch);
                }
                out.push(op);
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn is_operator(w: &str) -> bool {
    matches!(w, "&&" | "||" | ";" | "|" | "&")
}

fn unquote(w: &str) -> String {
    w.chars().filter(|c| !matches!(c, '\'' | '"')).collect()
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The commands package.json's script `name` runs, `npm run other` expanded in place:
/// each a list of words.
fn script_commands(manifest: &Value, name: &str, depth: usize) -> Vec<Vec<String>> {
    let Some(text) = script(manifest, name) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for command in shell_words(text).split(|w| is_operator(w)) {
        if command.is_empty() {
            continue;
        }
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        let called = match words.as_slice() {
            ["npm" | "yarn" | "pnpm", "run" | "run-script", other, ..] => Some(*other),
            ["npm" | "yarn" | "pnpm", "test" | "t", ..] => Some("test"),
            ["yarn" | "pnpm", other, ..] if script(manifest, other).is_some() => Some(*other),
            _ => None,
        };
        match called {
            Some(other) if depth < 4 && other != name => {
                out.extend(script_commands(manifest, other, depth + 1));
            }
            _ => out.push(command.to_vec()),
        }
    }
    out
}

/// Programs that start the command after them: their words are skipped. `plain` is
/// whether the result stays the framework's own (an environment set, a package run).
const WRAPPERS: &[(&str, bool)] = &[
    ("cross-env", true),
    ("env", true),
    ("npx", true),
    ("nyc", false),
    ("c8", false),
    ("dotenv", false),
    ("cross-env-shell", false),
    ("istanbul", false),
    ("nodemon", false),
];

/// The framework one command of a script runs, with its environment and arguments.
fn framework_in(command: &[String]) -> Option<(JsFramework, Vec<String>, Vec<String>, bool)> {
    let mut env = Vec::new();
    let mut plain = true;
    let mut wrapped = false;
    let mut i = 0;
    while i < command.len() {
        let word = unquote(&command[i]);
        let bin = word.rsplit('/').next().unwrap_or(&word);
        if is_assignment(&word) {
            env.push(command[i].clone());
        } else if let Some(fw) = JsFramework::of_bin(bin) {
            return Some((fw, env, command[i + 1..].to_vec(), plain));
        } else if bin == "node" {
            // `node --test …`, or node starting a framework's script by path.
            let rest = &command[i + 1..];
            if rest.iter().any(|w| unquote(w) == "--test") {
                // The guard runs `node --test` as it discovers tests: `npm test` is the
                // same suite only when the script names nothing more.
                let alone = rest.len() == 1;
                return Some((JsFramework::NodeTest, env, Vec::new(), plain && alone));
            }
            let target = rest.iter().position(|w| !w.starts_with('-'))?;
            let path = unquote(&rest[target]);
            let fw = ["mocha", "_mocha", "jest", "vitest", "ava", "tape"]
                .iter()
                .find(|b| {
                    path.ends_with(&format!(".bin/{b}"))
                        || path.contains(&format!("node_modules/{b}/"))
                })
                .and_then(|b| JsFramework::of_bin(b))?;
            return Some((fw, env, rest[target + 1..].to_vec(), plain));
        } else if let Some((_, keeps)) = WRAPPERS.iter().find(|(w, _)| *w == bin) {
            plain &= *keeps;
            wrapped = true;
        } else if !wrapped {
            // Another program (a linter, a build): not a test framework's command.
            return None;
        }
        // Else a wrapper's option or its value (`nyc --reporter lcov mocha`).
        i += 1;
    }
    None
}

/// How package.json runs the tests: the framework its `test` script invokes (through
/// `npm run` chains and wrappers such as nyc), else the one it declares as a dependency.
/// `None` when it names none (the caller falls back to `node --test` for test files).
pub fn invocation(manifest: &Value) -> Option<Invocation> {
    let placeholder = script(manifest, "test").is_some_and(|s| s.contains("no test specified"));
    if !placeholder && let Some(text) = script(manifest, "test") {
        let commands = script_commands(manifest, "test", 0);
        let alone = commands.len() == 1;
        for command in &commands {
            if let Some((framework, env, args, plain)) = framework_in(command) {
                return Some(Invocation {
                    framework,
                    env,
                    args,
                    via_node: false,
                    plain: plain && alone,
                    source: format!("package.json's `test` script `{text}`"),
                });
            }
        }
        // A tape suite is often started by node itself: `node test/index.js`.
        if declares(manifest, "tape")
            && let Some(command) = commands
                .iter()
                .find(|c| c.first().is_some_and(|w| w == "node"))
        {
            return Some(Invocation {
                framework: JsFramework::Tape,
                env: Vec::new(),
                args: command[1..].to_vec(),
                via_node: true,
                plain: alone,
                source: format!("package.json's `test` script `{text}` (tape)"),
            });
        }
    }
    [
        JsFramework::Vitest,
        JsFramework::Jest,
        JsFramework::Mocha,
        JsFramework::Ava,
        JsFramework::Tape,
    ]
    .into_iter()
    .find(|fw| fw.package().is_some_and(|p| declares(manifest, p)))
    .map(|framework| Invocation {
        framework,
        env: Vec::new(),
        args: Vec::new(),
        via_node: false,
        plain: false,
        source: format!("package.json's dependency on `{}`", framework.name()),
    })
}

/// The framework's executable in the checkout's own `node_modules`, when installed.
fn installed_bin(dir: &Path, framework: JsFramework) -> Option<String> {
    let bin = match framework {
        JsFramework::NodeTest => return Some("node".into()),
        fw => fw.name(),
    };
    let rel = format!("node_modules/.bin/{bin}");
    dir.join(&rel).is_file().then(|| format!("./{rel}"))
}

/// Why the checkout cannot run `invocation`'s framework, when it cannot: the framework
/// is not installed in its own `node_modules` (no `## Setup`, or one that did not
/// install it). Never a run that reports no tests.
pub fn missing(dir: &Path, invocation: &Invocation) -> Option<String> {
    let fw = invocation.framework;
    let package = fw.package()?;
    let found = if invocation.via_node {
        dir.join("node_modules")
            .join(package)
            .join("package.json")
            .is_file()
    } else {
        installed_bin(dir, fw).is_some()
    };
    (!found).then(|| {
        format!(
            "the project's tests run with {} ({}), which is not installed in the checkout's own node_modules; `## Setup` must install it (`npm ci`, `npm install`)",
            fw.name(),
            invocation.source
        )
    })
}

/// Drops `framework`'s reporter, watch and bail options from `args`.
fn kept_args(framework: JsFramework, args: &[String]) -> Vec<String> {
    let dropped = framework.dropped_options();
    let mut out = Vec::new();
    let mut skip_value = false;
    for w in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        let flag = unquote(w);
        let (name, inline) = match flag.split_once('=') {
            Some((n, _)) if n.starts_with('-') => (n.to_string(), true),
            _ => (flag.clone(), false),
        };
        // vitest's `--coverage.enabled`, `--reporter.x` and the like go with their flag.
        let base = name.split('.').next().unwrap_or(&name);
        match dropped.iter().find(|(d, _)| *d == name || *d == base) {
            Some((_, takes)) => skip_value = *takes && !inline,
            None => out.push(w.clone()),
        }
    }
    out
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The shell command that runs `invocation` in `dir` with factory's reporter: mocha's
/// writes to `report` (through `reporter`, the script factory wrote), jest's and
/// vitest's JSON reports to `report`, ava, tape and node print TAP.
pub fn command(dir: &Path, invocation: &Invocation, report: &Path, reporter: &Path) -> String {
    let fw = invocation.framework;
    let mut words: Vec<String> = vec![
        "CI=true".into(),
        "NO_COLOR=1".into(),
        "FORCE_COLOR=0".into(),
        format!(
            "FACTORY_TEST_REPORT={}",
            shell_quote(&report.to_string_lossy())
        ),
    ];
    words.extend(invocation.env.iter().cloned());
    if fw == JsFramework::NodeTest {
        words.push("node --test --test-reporter=tap".into());
        return words.join(" ");
    }
    let mut args = kept_args(fw, &invocation.args);
    if invocation.via_node {
        words.push("node".into());
    } else {
        words.push(installed_bin(dir, fw).unwrap_or_else(|| fw.name().into()));
    }
    match fw {
        JsFramework::Vitest => {
            // `vitest` alone watches when it has a terminal: `run` runs once.
            if matches!(
                args.first().map(|a| unquote(a)).as_deref(),
                Some("watch" | "dev" | "run")
            ) {
                args.remove(0);
            }
            words.push("run".into());
            words.extend(args);
            words.push("--reporter=json".into());
            words.push(format!(
                "--outputFile={}",
                shell_quote(&report.to_string_lossy())
            ));
        }
        JsFramework::Jest => {
            words.extend(args);
            words.push("--ci".into());
            words.push("--json".into());
            words.push(format!(
                "--outputFile={}",
                shell_quote(&report.to_string_lossy())
            ));
        }
        JsFramework::Mocha => {
            words.extend(args);
            words.push("--reporter".into());
            words.push(shell_quote(&reporter.to_string_lossy()));
        }
        JsFramework::Ava => {
            words.extend(args);
            words.push("--tap".into());
        }
        JsFramework::Tape | JsFramework::NodeTest => words.extend(args),
    }
    words.join(" ")
}

/// factory's mocha reporter: one JSON line per test (its file and title path).
pub const MOCHA_REPORTER: &str = include_str!("mocha_reporter.cjs");

/// Runs `invocation` in `dir` and reads its report. An error when the framework could
/// not start at all (a program not found).
pub fn run(
    dir: &Path,
    invocation: &Invocation,
    timeout: Duration,
) -> Result<(Output, TestRun), String> {
    // A directory per run: the report of one run is never read as another's. Inside
    // the checkout, so that a test run confined to it (the gate's sandbox) can write it.
    let work = tempfile::Builder::new()
        .prefix(".factory-js-report-")
        .tempdir_in(dir)
        .map_err(|e| format!("scratch directory for the test report: {e}"))?;
    let report = work.path().join("report.json");
    let reporter = work.path().join("factory-mocha-reporter.cjs");
    std::fs::write(&reporter, MOCHA_REPORTER)
        .map_err(|e| format!("cannot write the mocha reporter: {e}"))?;
    let script = command(dir, invocation, &report, &reporter);
    let out = run_shell(&format!("{script} 2>&1"), dir, timeout).map_err(|e| e.to_string())?;
    if out.code == Some(127) {
        return Err(format!(
            "`{}` could not start: {}",
            invocation.framework.name(),
            out.tail(3)
        ));
    }
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let run = match invocation.framework {
        JsFramework::Mocha => parse_mocha(&text, dir),
        JsFramework::Jest | JsFramework::Vitest => parse_jest(&text, dir),
        JsFramework::Ava => parse_ava(&out.stdout),
        JsFramework::Tape => parse_tape(&out.stdout),
        JsFramework::NodeTest => parse_tap(&out.stdout),
    };
    Ok((out, run))
}

/// `path` relative to the checkout at `dir` (either spelling of it: as given, or with
/// symbolic links resolved), so both sides name a file alike.
fn relative(dir: &Path, path: &str) -> String {
    let p = Path::new(path);
    let canonical = dir.canonicalize().ok();
    [Some(dir.to_path_buf()), canonical]
        .iter()
        .flatten()
        .find_map(|d| p.strip_prefix(d).ok())
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

fn join_id(file: Option<String>, titles: impl IntoIterator<Item = String>) -> String {
    file.into_iter()
        .chain(titles.into_iter().filter(|t| !t.trim().is_empty()))
        .collect::<Vec<_>>()
        .join(" > ")
}

/// factory's mocha reporter: `{"file", "titles", "state"}` per line.
pub fn parse_mocha(report: &str, dir: &Path) -> TestRun {
    let mut run = TestRun::default();
    for line in report.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let file = v
            .get("file")
            .and_then(Value::as_str)
            .map(|f| relative(dir, f));
        let titles: Vec<String> = v
            .get("titles")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let outcome = match v.get("state").and_then(Value::as_str) {
            Some("passed") => Outcome::Passed,
            Some("failed") => Outcome::Failed,
            Some("skipped") => Outcome::Skipped,
            _ => continue,
        };
        if !titles.is_empty() {
            run.record(join_id(file, titles), outcome);
        }
    }
    run
}

/// jest's `--json` report and vitest's `--reporter=json` (the same shape): per file,
/// each test's `ancestorTitles`, `title` and `status`. A file that failed with no failed
/// test (it could not load, a hook broke) fails under the file's own id.
pub fn parse_jest(report: &str, dir: &Path) -> TestRun {
    let mut run = TestRun::default();
    let Ok(v) = serde_json::from_str::<Value>(report) else {
        return run;
    };
    let files = v
        .get("testResults")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for file in files {
        let name = file
            .get("name")
            .or_else(|| file.get("testFilePath"))
            .and_then(Value::as_str)
            .map(|n| relative(dir, n));
        let tests = file
            .get("assertionResults")
            .or_else(|| file.get("testResults"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut any_failed = false;
        for t in tests {
            let outcome = match t.get("status").and_then(Value::as_str) {
                Some("passed") => Outcome::Passed,
                Some("failed") => Outcome::Failed,
                Some("pending" | "skipped" | "todo" | "disabled") => Outcome::Skipped,
                _ => continue,
            };
            any_failed |= outcome == Outcome::Failed;
            let ancestors = t
                .get("ancestorTitles")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            let Some(title) = t.get("title").and_then(Value::as_str) else {
                continue;
            };
            let id = join_id(
                name.clone(),
                ancestors.into_iter().chain([title.to_string()]),
            );
            run.record(id, outcome);
        }
        let file_failed = file.get("status").and_then(Value::as_str) == Some("failed");
        if file_failed
            && !any_failed
            && let Some(name) = name
        {
            run.record(name, Outcome::Failed);
        }
    }
    run
}

/// `ava --tap`: `ok 1 - file › title`; ids use ` > ` as the other frameworks do.
pub fn parse_ava(output: &str) -> TestRun {
    let tap = parse_tap(output);
    let mut run = TestRun::default();
    for (id, outcome) in tap.outcomes {
        run.record(id.replace(" › ", " > "), outcome);
    }
    run
}

/// tape's TAP: a `# name` comment opens each test (nested `t.test` ones too, flat), the
/// `ok`/`not ok` lines after it are its assertions. A test fails when one of its
/// assertions does; `# TODO name` is an expected failure, `# SKIP name` skipped. The
/// summary after the plan (`# tests 3`, `# pass 3`, `# ok`) is not a test.
pub fn parse_tape(output: &str) -> TestRun {
    #[derive(Default)]
    struct Open {
        name: String,
        failed: bool,
        asserted: usize,
        skipped: usize,
        todo: bool,
        skip: bool,
    }
    fn close(run: &mut TestRun, t: Open) {
        let outcome = if t.skip {
            Outcome::Skipped
        } else if t.todo {
            Outcome::ExpectedFailure
        } else if t.failed {
            Outcome::Failed
        } else if t.asserted > 0 && t.skipped == t.asserted {
            Outcome::Skipped
        } else {
            Outcome::Passed
        };
        run.record(t.name, outcome);
    }
    let mut run = TestRun::default();
    let mut open: Option<Open> = None;
    let mut after_plan = false;
    for line in output.lines() {
        if line.starts_with("TAP version") {
            after_plan = false;
            continue;
        }
        if line.starts_with("1..") {
            after_plan = true;
            if let Some(t) = open.take() {
                close(&mut run, t);
            }
            continue;
        }
        if let Some(name) = line.strip_prefix("# ") {
            let summary = name == "ok"
                || ["tests ", "pass ", "fail ", "skip ", "todo "]
                    .iter()
                    .any(|p| name.starts_with(p) && name[p.len()..].trim().parse::<u64>().is_ok());
            if after_plan && summary {
                continue;
            }
            if let Some(t) = open.take() {
                close(&mut run, t);
            }
            let (name, todo, skip) = if let Some(n) = name.strip_prefix("TODO ") {
                (n, true, false)
            } else if let Some(n) = name.strip_prefix("SKIP ") {
                (n, false, true)
            } else {
                (name, false, false)
            };
            open = Some(Open {
                name: name.trim().to_string(),
                todo,
                skip,
                ..Default::default()
            });
            continue;
        }
        let (ok, rest) = if let Some(r) = line.strip_prefix("not ok ") {
            (false, r)
        } else if let Some(r) = line.strip_prefix("ok ") {
            (true, r)
        } else {
            continue;
        };
        let Some(t) = open.as_mut() else { continue };
        let directive = rest.rsplit_once(" # ").map(|(_, d)| d.to_ascii_uppercase());
        let skip = directive.as_deref().is_some_and(|d| d.starts_with("SKIP"));
        let todo = directive.as_deref().is_some_and(|d| d.starts_with("TODO"));
        t.asserted += 1;
        if skip {
            t.skipped += 1;
        }
        if !ok && !todo {
            t.failed = true;
        }
    }
    if let Some(t) = open.take() {
        close(&mut run, t);
    }
    run
}

#[cfg(test)]
#[path = "js_tests.rs"]
mod tests;
