//! Progress lines for long commands (an eval, a precheck): what is running now, and
//! how long each step took, so a 14-second test run is not 14 seconds of silence.

use std::fmt;
use std::sync::Arc;

/// Receives one progress line.
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// Where progress lines go; [`Progress::none`] drops them.
#[derive(Clone, Default)]
pub struct Progress(Option<Sink>);

impl Progress {
    /// Drops every line.
    pub fn none() -> Self {
        Self(None)
    }

    /// Prints each line on stderr, after `prefix: `.
    pub fn stderr(prefix: &'static str) -> Self {
        Self(Some(Arc::new(move |line: &str| {
            eprintln!("{prefix}: {}", crate::sys::redact::redact(line));
        })))
    }

    /// Sends each line to `f` (tests, other front ends).
    pub fn to(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    pub fn say(&self, line: &str) {
        if let Some(f) = &self.0 {
            f(line);
        }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(on)"
        } else {
            "Progress(off)"
        })
    }
}
