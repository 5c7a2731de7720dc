//! Judging a candidate: the compiler's IR check, the same entry point `factory check
//! FILE.fwir` uses, run on the candidate's canonical text. Going through the text also
//! proves the candidate survives the round trip through the file it is written to.

use std::collections::BTreeSet;
use std::path::Path;

use factory_compiler::diagnostic::Located;
use factory_compiler::driver;
use factory_compiler::ir::{Ir, to_text};

/// The rules' context: which roles have a prompt (as `factory check` sees them from a
/// directory).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    roles: Option<BTreeSet<String>>,
}

impl Rules {
    /// The rules as `factory check` applies them to a file in `anchor` (a file or a
    /// directory): the built-in roles plus the project's own prompts.
    pub fn near(anchor: &Path) -> Rules {
        Rules {
            roles: driver::roles_near(anchor),
        }
    }

    /// Every finding on `ir`, errors and warnings, pointing into its canonical text.
    pub fn findings(&self, ir: &Ir) -> Vec<Located> {
        driver::check_ir_text("candidate.fwir", &to_text(ir), self.roles.clone())
    }

    /// The warnings of `ir` (code and message), the baseline a mutant of it is held to.
    pub fn warnings(&self, ir: &Ir) -> Baseline {
        Baseline(
            self.findings(ir)
                .into_iter()
                .filter(|l| !l.diagnostic.is_error())
                .map(|l| (l.diagnostic.code.as_str().to_string(), l.diagnostic.message))
                .collect(),
        )
    }

    /// Whether a mutant passes: no error, and no warning its parent (`baseline`) did not
    /// have. A new warning (a report nobody writes any more, say) is a mutation that
    /// broke something; `factory check --deny-warnings`, which `evolve.fwf` gates on,
    /// would reject it too.
    pub fn accepts(&self, ir: &Ir, baseline: &Baseline) -> bool {
        self.findings(ir).iter().all(|l| {
            !l.diagnostic.is_error()
                && baseline.0.contains(&(
                    l.diagnostic.code.as_str().to_string(),
                    l.diagnostic.message.clone(),
                ))
        })
    }
}

/// The warnings a parent already has; its mutants may keep them.
#[derive(Debug, Clone, Default)]
pub struct Baseline(BTreeSet<(String, String)>);
