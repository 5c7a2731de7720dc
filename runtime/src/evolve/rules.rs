//! Judging a candidate: the compiler's IR check, the same entry point `factory check
//! FILE.fwir` uses, run on the candidate's canonical text. Going through the text also
//! proves the candidate survives the round trip through the file it is written to.

use std::collections::BTreeSet;
use std::path::Path;

use factory_compiler::driver::{self, Located};
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

    /// Whether `ir` passes: no finding is an error.
    pub fn accepts(&self, ir: &Ir) -> bool {
        !self.findings(ir).iter().any(|l| l.diagnostic.is_error())
    }
}
