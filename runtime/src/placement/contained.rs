//! `factory contained -- factory <command>` (docs/sandbox.md): one factory command run
//! whole inside the sandbox. Path rewriting only — the leading `factory` becomes this
//! executable, every other argument goes through as it is, and the paths are the same
//! inside (bubblewrap binds them where they are). Credentials by policy: the sandbox
//! sees `FACTORY_`-prefixed variables plus exactly what `--forward` names, on top of
//! what any program needs (`PATH`, `HOME`, the locale, the terminal). [`compose`] is
//! both the dry run and the live path.
//!
//! Not a security boundary for agent-authored code: kept changes still need a human's
//! review. It keeps the command and what it starts off the rest of the machine.

use std::path::{Path, PathBuf};

use super::Sandbox;
use super::policy::{HOME_SECRETS, Network, Policy};
use crate::sys::redact;

/// What every program needs, always passed on.
const BASE_VARS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "NO_COLOR",
];

/// The prefix of the variables that always go in.
pub const PREFIX: &str = "FACTORY_";

/// What `factory contained` was asked to run.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The command after `--`, starting with `factory`.
    pub command: &'a [String],
    /// Where it runs (its working directory): writable inside.
    pub project: &'a Path,
    /// Variable names passed on besides the `FACTORY_` ones.
    pub forward: &'a [String],
    /// The factory executable the leading `factory` becomes.
    pub exe: &'a Path,
}

/// The command as it will run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub program: String,
    pub args: Vec<String>,
    /// The environment the command gets (the process starts with only this).
    pub env: Vec<(String, String)>,
}

impl Composed {
    /// The dry run's lines: the argv and the environment's names, secrets masked.
    pub fn render(&self) -> String {
        let mut argv = vec![self.program.clone()];
        argv.extend(self.args.iter().cloned());
        let mut out = format!("{}\n", redact::redact(&shell_words(&argv)));
        for (name, value) in &self.env {
            let shown = if is_credential(name) {
                redact::mask_value(value)
            } else {
                redact::redact(value).into_owned()
            };
            out.push_str(&format!("env {name}={shown}\n"));
        }
        out
    }
}

/// Why a contained command cannot run.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ContainedError {
    #[error("nothing to run")]
    #[diagnostic(
        code(factory::contained::no_command),
        help("name a factory command after `--`, e.g. `factory contained -- factory eval`")
    )]
    NoCommand,
    #[error("`{0}` is not a factory command")]
    #[diagnostic(
        code(factory::contained::not_factory),
        help(
            "contained runs factory's own commands: `factory contained -- factory eval`; a project's tools run inside through them"
        )
    )]
    NotFactory(String),
    #[error("`--placement {0}` is not available for contained commands")]
    #[diagnostic(
        code(factory::contained::placement),
        help(
            "use `--placement sandbox` (bubblewrap; container placement is not built yet), or run the command directly on the host"
        )
    )]
    Placement(&'static str),
    #[error("the sandbox cannot be used here: {0}")]
    #[diagnostic(
        code(factory::contained::probe),
        help(
            "install bubblewrap (`apt-get install bubblewrap`) where unprivileged user namespaces work; `factory doctor --placement sandbox` probes it. contained never falls back to the host"
        )
    )]
    Probe(String),
}

/// The command `req` asks for, under `sandbox`.
pub fn compose(
    sandbox: &Sandbox,
    req: &Request<'_>,
    environment: impl IntoIterator<Item = (String, String)>,
) -> Result<Composed, ContainedError> {
    let (first, rest) = req.command.split_first().ok_or(ContainedError::NoCommand)?;
    let name = Path::new(first).file_name().and_then(|n| n.to_str());
    if name != Some("factory") {
        return Err(ContainedError::NotFactory(first.clone()));
    }
    let confinement = sandbox.confine(contained_policy(sandbox, req.project));
    let (program, args) = confinement.command(
        &req.exe.display().to_string(),
        rest,
        req.project,
        &readable_exe(req.exe),
    );
    Ok(Composed {
        program,
        args,
        env: passed_on(environment, req.forward),
    })
}

/// The placements contained supports: the sandbox, or a refusal naming why.
pub fn check_placement(placement: &str) -> Result<(), ContainedError> {
    match placement {
        "sandbox" => Ok(()),
        "container" => Err(ContainedError::Placement("container")),
        _ => Err(ContainedError::Placement("host")),
    }
}

/// The project and `$FACTORY_HOME` writable (the command writes its store and the
/// registry), and the build tools' caches, the home directory's credential stores hidden, the host's network (an
/// agent CLI must reach its model), a private `/tmp`.
fn contained_policy(sandbox: &Sandbox, project: &Path) -> Policy {
    let mut writable = vec![project.to_path_buf()];
    writable.extend(sandbox.factory_home.clone().filter(|h| h.exists()));
    // Builds inside need their tools' caches, as the gate's commands do.
    writable.extend(sandbox.tool_caches().into_iter().filter(|c| c.exists()));
    let mut hidden: Vec<PathBuf> = sandbox
        .home
        .iter()
        .flat_map(|h| HOME_SECRETS.iter().map(move |s| h.join(s)))
        .filter(|p| p.exists())
        .collect();
    hidden.sort();
    Policy {
        readable: vec![project.to_path_buf()],
        writable,
        hidden,
        network: Network::Agent,
    }
}

/// The executable, when it lives under `/tmp` (the private `/tmp` would cover it).
fn readable_exe(exe: &Path) -> Vec<PathBuf> {
    if exe.starts_with("/tmp") {
        vec![exe.to_path_buf()]
    } else {
        Vec::new()
    }
}

/// The environment the command gets: the base variables, every `FACTORY_` one and
/// exactly the forwarded names, in the order they were found.
pub fn passed_on(
    environment: impl IntoIterator<Item = (String, String)>,
    forward: &[String],
) -> Vec<(String, String)> {
    environment
        .into_iter()
        .filter(|(k, _)| {
            BASE_VARS.contains(&k.as_str()) || k.starts_with(PREFIX) || forward.contains(k)
        })
        .collect()
}

/// Whether `name` holds a credential for `verify` and the dry run.
fn is_credential(name: &str) -> bool {
    redact::is_secret_name(name)
}

/// One credential's shape, as `contained verify` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub name: String,
    pub state: ShapeState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeState {
    Absent,
    Empty,
    /// Holds whitespace or control characters: a paste that took a newline along.
    Malformed,
    WellFormed {
        chars: usize,
    },
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.state {
            ShapeState::Absent => write!(f, "{}: absent", self.name),
            ShapeState::Empty => write!(f, "{}: present but empty", self.name),
            ShapeState::Malformed => write!(
                f,
                "{}: present but malformed (holds whitespace or control characters)",
                self.name
            ),
            ShapeState::WellFormed { chars } => {
                write!(f, "{}: present, well-formed ({chars} chars)", self.name)
            }
        }
    }
}

/// The credentials a contained command would get — every `FACTORY_` variable whose
/// name says it is secret, and each forwarded name — by shape, never by value.
pub fn verify(
    environment: impl IntoIterator<Item = (String, String)>,
    forward: &[String],
) -> Vec<Shape> {
    let env: Vec<(String, String)> = environment.into_iter().collect();
    let mut names: Vec<String> = env
        .iter()
        .filter(|(k, _)| k.starts_with(PREFIX) && is_credential(k))
        .map(|(k, _)| k.clone())
        .collect();
    names.sort();
    for f in forward {
        if !names.contains(f) {
            names.push(f.clone());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let state = match env.iter().find(|(k, _)| *k == name) {
                None => ShapeState::Absent,
                Some((_, v)) if v.is_empty() => ShapeState::Empty,
                Some((_, v)) if v.chars().any(|c| c.is_whitespace() || c.is_control()) => {
                    ShapeState::Malformed
                }
                Some((_, v)) => ShapeState::WellFormed {
                    chars: v.chars().count(),
                },
            };
            Shape { name, state }
        })
        .collect()
}

/// `argv` as one shell line, each word quoted when it needs to be.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs the composed command, its stdio the caller's; its exit code.
pub fn run(composed: &Composed, cwd: &Path) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new(&composed.program)
        .args(&composed.args)
        .env_clear()
        .envs(composed.env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .status()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> Sandbox {
        Sandbox {
            engine: crate::placement::Engine::Bubblewrap("/usr/bin/bwrap".into()),
            fallback: None,
            home: Some("/nonexistent-home".into()),
            factory_home: None,
            pids: Err("none in a unit test".into()),
        }
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_leading_factory_becomes_this_executable_and_nothing_else_changes() {
        let command: Vec<String> = ["factory", "eval", "--json", "a b"]
            .map(String::from)
            .to_vec();
        let req = Request {
            command: &command,
            project: Path::new("/work/p"),
            forward: &["OPENAI_API_KEY".to_string()],
            exe: Path::new("/opt/factory"),
        };
        let composed = compose(
            &sandbox(),
            &req,
            env(&[
                ("PATH", "/usr/bin"),
                ("FACTORY_TOKEN", "sk-proj-abcdefghijklmnopqrstuvwx"),
                ("OPENAI_API_KEY", "sk-abcdefghijklmnopqrstuvwxyz012345"),
                ("AWS_SECRET_ACCESS_KEY", "not-forwarded-value"),
            ]),
        )
        .unwrap();
        // The build tools' caches that exist differ by machine.
        let mut shown = composed.render();
        for cache in sandbox().tool_caches() {
            shown = shown.replace(&format!(" --bind {0} {0}", cache.display()), "");
        }
        insta::assert_snapshot!(shown, @r"
        /usr/bin/bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind /work/p /work/p --bind /work/p /work/p --unshare-all --share-net --unshare-user --uid 1000 --gid 1000 --die-with-parent --new-session --setenv TMPDIR /tmp --setenv FACTORY_PLACEMENT sandbox --setenv IS_SANDBOX 1 --chdir /work/p -- /opt/factory eval --json 'a b'
        env PATH=/usr/bin
        env FACTORY_TOKEN=[REDACTED] (32 chars)
        env OPENAI_API_KEY=[REDACTED] (35 chars)
        ");
        assert!(
            !composed
                .env
                .iter()
                .any(|(k, _)| k == "AWS_SECRET_ACCESS_KEY")
        );
    }

    #[test]
    fn only_factory_commands_are_contained() {
        let command = vec!["sh".to_string(), "-c".to_string(), "id".to_string()];
        let req = Request {
            command: &command,
            project: Path::new("/work/p"),
            forward: &[],
            exe: Path::new("/opt/factory"),
        };
        assert!(matches!(
            compose(&sandbox(), &req, Vec::new()),
            Err(ContainedError::NotFactory(_))
        ));
        let none: Vec<String> = Vec::new();
        let req = Request {
            command: &none,
            ..req
        };
        assert!(matches!(
            compose(&sandbox(), &req, Vec::new()),
            Err(ContainedError::NoCommand)
        ));
    }

    #[test]
    fn verify_reports_shapes_never_values() {
        let shapes = verify(
            env(&[
                ("FACTORY_API_KEY", "sk-planted-value-123456"),
                ("FACTORY_PROJECT", "/work/p"),
                ("GITHUB_TOKEN", "line\nbreak"),
                ("EMPTY_TOKEN", ""),
            ]),
            &[
                "GITHUB_TOKEN".to_string(),
                "EMPTY_TOKEN".to_string(),
                "MISSING_KEY".to_string(),
            ],
        );
        let text: Vec<String> = shapes.iter().map(Shape::to_string).collect();
        insta::assert_snapshot!(text.join("\n"), @r"
        FACTORY_API_KEY: present, well-formed (23 chars)
        GITHUB_TOKEN: present but malformed (holds whitespace or control characters)
        EMPTY_TOKEN: present but empty
        MISSING_KEY: absent
        ");
    }
}
