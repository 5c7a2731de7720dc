//! The base side's measurement, kept per (base commit, eval configuration, `## Setup`,
//! toolchain, factory version): the branches of one parallel run and the experiments of
//! a campaign that share a base measure it once. Only a base with nothing that varies
//! is kept — timings are measured again, interleaved with the head's, every time.

use std::path::{Path, PathBuf};

use crate::eval::{EvalSettings, Measurement};
use crate::events::chain::sha256_hex;
use crate::sys::process::{run_program, which};

/// Where one base measurement is kept. The key (which asks each toolchain its
/// version) is computed on first use: a base with something that varies never is.
pub struct BaseCache {
    store: PathBuf,
    key: serde_json::Value,
    path: std::sync::OnceLock<PathBuf>,
}

impl BaseCache {
    /// The entry for `commit` measured under `settings`, `setup` and `eval_command`, in
    /// the project store at `store` (`.factory/cache/base/`).
    pub fn new(
        store: &Path,
        commit: &str,
        settings: &EvalSettings,
        setup: &[String],
        eval_command: Option<&str>,
    ) -> Self {
        let key = serde_json::json!({
            "commit": commit,
            "factory": env!("CARGO_PKG_VERSION"),
            "profile": settings.profile.as_ref().map(|p| p.content_hash()),
            "project_dimensions": settings.project_dimensions,
            "eval_command": eval_command,
            "test_timeout": settings.test_timeout.as_secs(),
            "setup": setup,
        });
        Self {
            store: store.to_path_buf(),
            key,
            path: std::sync::OnceLock::new(),
        }
    }

    fn path(&self) -> &Path {
        self.path.get_or_init(|| {
            let key = serde_json::json!({ "inputs": self.key, "toolchain": toolchain() });
            let name = sha256_hex(key.to_string().as_bytes());
            crate::project::layout::FactoryPaths::new(&self.store)
                .dir()
                .join("cache/base")
                .join(format!("{name}.json"))
        })
    }

    /// Where the base's test run is kept, beside its measurement (read and written by
    /// the test guard).
    pub fn tests_file(&self) -> PathBuf {
        self.path().with_extension("tests.json")
    }

    /// The kept measurement, re-rooted at `code`; `None` when there is none or it
    /// cannot be read (then the base is measured, as without a cache).
    pub fn load(&self, code: &Path) -> Option<Measurement> {
        let text = std::fs::read_to_string(self.path()).ok()?;
        serde_json::from_str::<Measurement>(&text)
            .ok()
            .map(|m| m.rooted_at(code))
    }

    /// Keeps `m`. A failure to write costs only the next experiment's base run.
    pub fn save(&self, m: &Measurement) {
        let Ok(text) = serde_json::to_string(m) else {
            return;
        };
        let path = self.path();
        if let Some(dir) = path.parent()
            && std::fs::create_dir_all(dir).is_ok()
            && let Err(e) = crate::sys::files::atomic_write(path, text.as_bytes())
        {
            tracing::warn!(path = %path.display(), "cannot keep the base measurement: {e}");
        }
    }
}

/// What each toolchain on PATH says of its version: an upgraded compiler or
/// interpreter measures the base anew. Asked once per process (pip and npm follow
/// their interpreter's version and take long to ask).
fn toolchain() -> &'static [String] {
    static VERSIONS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    VERSIONS.get_or_init(|| {
        let tools: [(&str, &[&str]); 5] = [
            ("cargo", &["--version"]),
            ("rustc", &["--version"]),
            ("go", &["version"]),
            ("python3", &["--version"]),
            ("node", &["--version"]),
        ];
        tools
            .iter()
            .filter(|(t, _)| which(t).is_some())
            .map(|(t, args)| {
                let out = run_program(
                    t,
                    args,
                    &std::env::temp_dir(),
                    std::time::Duration::from_secs(20),
                );
                match out {
                    Ok(o) => format!("{t}: {}", o.stdout.trim()),
                    Err(e) => format!("{t}: {e}"),
                }
            })
            .collect()
    })
}
