//! The adversarial (GAN-style) eval loop's phase machine and its state file
//! `.factory/adversarial_state.json` (spec §6.4, §7.4, §8.11, A.4).
//!
//! Each round scores the active role. A streak of `hysteresis` rounds at or above the
//! active role's threshold hands the turn to the other role and resets the active
//! streak; the per-role streak counters are kept, and convergence needs *both* to
//! reach `convergence_window`. Note that with `convergence_window > hysteresis` (the
//! defaults are 5 and 3) a role's streak cannot exceed `hysteresis` before the turn
//! passes, so such a loop runs until `max_rounds` — this follows A.4 exactly.

use std::fs;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::project::config::{AdversarialComponent, AdversarialConfig, AdversarialRole};
use crate::project::layout::FactoryPaths;
use crate::sys::files::{atomic_write, keep_aside};

/// How many phase records the state keeps; older ones are dropped first.
pub const MAX_HISTORY: usize = 200;

/// One round, as recorded in the state's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdversarialPhaseRecord {
    /// 1-based round number.
    pub round: u32,
    /// The role that was scored this round.
    pub active_role: AdversarialRole,
    /// Its score.
    pub score: f64,
    /// The metric's name.
    pub metric_name: String,
    /// Whether the turn passed to the other role after this round.
    pub switched: bool,
}

/// The persisted loop state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdversarialState {
    /// Whose turn it is.
    pub active_role: AdversarialRole,
    /// Rounds played so far.
    pub current_round: u32,
    /// The active role's current streak of above-threshold rounds.
    pub consecutive_above: u32,
    /// The generator's streak, as last updated while it was active.
    pub generator_consecutive_above: u32,
    /// The discriminator's streak, as last updated while it was active.
    pub discriminator_consecutive_above: u32,
    /// Both streaks reached the convergence window.
    pub converged: bool,
    /// The most recent rounds, oldest first (at most [`MAX_HISTORY`]).
    pub history: Vec<AdversarialPhaseRecord>,
}

impl Default for AdversarialState {
    fn default() -> Self {
        Self {
            active_role: AdversarialRole::Generator,
            current_round: 0,
            consecutive_above: 0,
            generator_consecutive_above: 0,
            discriminator_consecutive_above: 0,
            converged: false,
            history: Vec::new(),
        }
    }
}

/// The component whose turn it is.
pub fn active_component<'a>(
    config: &'a AdversarialConfig,
    state: &AdversarialState,
) -> &'a AdversarialComponent {
    match state.active_role {
        AdversarialRole::Generator => &config.generator,
        AdversarialRole::Discriminator => &config.discriminator,
    }
}

/// True only when both roles' streaks independently reach `convergence_window`.
pub fn detect_convergence(state: &AdversarialState, config: &AdversarialConfig) -> bool {
    state.generator_consecutive_above >= config.convergence_window
        && state.discriminator_consecutive_above >= config.convergence_window
}

/// True when the loop should stop: converged, or `max_rounds` played.
pub fn is_finished(state: &AdversarialState, config: &AdversarialConfig) -> bool {
    state.converged || config.max_rounds.is_some_and(|m| state.current_round >= m)
}

/// Plays one round (A.4): scores the active role, updates its streak, switches the
/// turn after `hysteresis` consecutive above-threshold rounds, recomputes convergence
/// and appends a history record. Returns whether the turn switched.
pub fn step(
    state: &mut AdversarialState,
    config: &AdversarialConfig,
    round_score: f64,
    metric_name: &str,
) -> bool {
    let active = active_component(config, state);
    let above = round_score >= active.threshold;
    state.consecutive_above = if above {
        state.consecutive_above + 1
    } else {
        0
    };
    match state.active_role {
        AdversarialRole::Generator => state.generator_consecutive_above = state.consecutive_above,
        AdversarialRole::Discriminator => {
            state.discriminator_consecutive_above = state.consecutive_above
        }
    }
    let role_this_round = state.active_role;
    let switched = state.consecutive_above >= config.hysteresis;
    if switched {
        state.active_role = state.active_role.other();
        state.consecutive_above = 0;
    }
    state.converged = detect_convergence(state, config);
    state.current_round += 1;
    state.history.push(AdversarialPhaseRecord {
        round: state.current_round,
        active_role: role_this_round,
        score: round_score,
        metric_name: metric_name.to_owned(),
        switched,
    });
    if state.history.len() > MAX_HISTORY {
        let excess = state.history.len() - MAX_HISTORY;
        state.history.drain(..excess);
    }
    switched
}

/// What [`load_state`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedState {
    /// The state (fresh when the file was missing or corrupt).
    pub state: AdversarialState,
    /// Where a corrupt file was moved, so it is not lost.
    pub set_aside: Option<PathBuf>,
}

/// Reads `.factory/adversarial_state.json`. A missing file is a fresh state. A
/// corrupt one (bad JSON, wrong types, unknown fields) is also a fresh state — it
/// must never block a research cycle — and the file is renamed to
/// `adversarial_state.json.corrupt-<millis>` so nothing is lost.
pub fn load_state(paths: &FactoryPaths) -> io::Result<LoadedState> {
    let path = paths.adversarial_state_json();
    let text = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(LoadedState {
                state: AdversarialState::default(),
                set_aside: None,
            });
        }
        Err(e) => return Err(e),
    };
    match serde_json::from_slice(&text) {
        Ok(state) => Ok(LoadedState {
            state,
            set_aside: None,
        }),
        Err(err) => {
            let aside = keep_aside(&path)?;
            tracing::warn!(file = %path.display(), kept = %aside.display(), %err,
                "corrupt adversarial state set aside; starting fresh");
            Ok(LoadedState {
                state: AdversarialState::default(),
                set_aside: Some(aside),
            })
        }
    }
}

/// Writes the state atomically.
pub fn save_state(paths: &FactoryPaths, state: &AdversarialState) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(state).map_err(io::Error::other)?;
    text.push('\n');
    atomic_write(&paths.adversarial_state_json(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(role: AdversarialRole, threshold: f64) -> AdversarialComponent {
        AdversarialComponent {
            role,
            eval_command: "true".into(),
            metric_name: "m".into(),
            threshold,
            scope: vec![],
            timeout: 10,
        }
    }

    fn config(hysteresis: u32, window: u32) -> AdversarialConfig {
        AdversarialConfig {
            generator: component(AdversarialRole::Generator, 0.5),
            discriminator: component(AdversarialRole::Discriminator, 0.8),
            hysteresis,
            max_rounds: Some(50),
            convergence_window: window,
        }
    }

    #[test]
    fn switches_after_hysteresis_consecutive_rounds_above_threshold() {
        let cfg = config(3, 5);
        let mut s = AdversarialState::default();
        assert!(!step(&mut s, &cfg, 0.6, "m"));
        assert!(!step(&mut s, &cfg, 0.2, "m"), "a miss resets the streak");
        assert_eq!(s.consecutive_above, 0);
        assert!(!step(&mut s, &cfg, 0.5, "m"), "threshold is inclusive");
        assert!(!step(&mut s, &cfg, 0.7, "m"));
        assert!(step(&mut s, &cfg, 0.9, "m"));
        assert_eq!(s.active_role, AdversarialRole::Discriminator);
        assert_eq!(
            s.consecutive_above, 0,
            "the new active streak starts at zero"
        );
        assert_eq!(
            s.generator_consecutive_above, 3,
            "the vacated role's counter is kept"
        );
        // The discriminator is judged against its own threshold.
        assert!(!step(&mut s, &cfg, 0.7, "m"));
        assert_eq!(s.discriminator_consecutive_above, 0);
        assert_eq!(s.current_round, 6);
        let switched: Vec<_> = s.history.iter().map(|r| r.switched).collect();
        assert_eq!(switched, vec![false, false, false, false, true, false]);
        assert_eq!(s.history[5].active_role, AdversarialRole::Discriminator);
    }

    #[test]
    fn convergence_needs_both_roles() {
        let cfg = config(2, 2);
        let mut s = AdversarialState::default();
        step(&mut s, &cfg, 0.9, "m");
        step(&mut s, &cfg, 0.9, "m"); // generator streak 2 → switch
        assert!(!s.converged, "one side alone must not converge");
        step(&mut s, &cfg, 0.9, "m");
        assert!(!s.converged);
        step(&mut s, &cfg, 0.9, "m"); // discriminator streak 2
        assert!(s.converged);
        assert!(is_finished(&s, &cfg));
    }

    #[test]
    fn one_sided_streak_never_converges() {
        let cfg = config(10, 3);
        let mut s = AdversarialState::default();
        for _ in 0..8 {
            step(&mut s, &cfg, 1.0, "m");
        }
        assert_eq!(s.generator_consecutive_above, 8);
        assert!(!s.converged && !detect_convergence(&s, &cfg));
    }

    #[test]
    fn history_is_bounded_and_max_rounds_finishes() {
        let mut cfg = config(1000, 1000);
        cfg.max_rounds = Some(MAX_HISTORY as u32 + 10);
        let mut s = AdversarialState::default();
        while !is_finished(&s, &cfg) {
            step(&mut s, &cfg, 0.0, "m");
        }
        assert_eq!(s.current_round, MAX_HISTORY as u32 + 10);
        assert_eq!(s.history.len(), MAX_HISTORY);
        assert_eq!(s.history[0].round, 11);
    }

    #[test]
    fn state_round_trips_and_corrupt_files_are_kept_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = crate::project::layout::ensure_factory_dir(tmp.path()).unwrap();
        assert_eq!(
            load_state(&paths).unwrap().state,
            AdversarialState::default()
        );
        let cfg = config(2, 2);
        let mut s = AdversarialState::default();
        step(&mut s, &cfg, 0.9, "m");
        save_state(&paths, &s).unwrap();
        assert_eq!(load_state(&paths).unwrap().state, s);

        for junk in ["{oops", r#"{"active_role": 3}"#] {
            fs::write(paths.adversarial_state_json(), junk).unwrap();
            let loaded = load_state(&paths).unwrap();
            assert_eq!(loaded.state, AdversarialState::default());
            let aside = loaded.set_aside.unwrap();
            assert_eq!(fs::read_to_string(aside).unwrap(), junk);
            assert!(!paths.adversarial_state_json().exists());
        }
    }
}
