//! The mutation operators, by name. Each is a function `(&Ir, &mut Source) ->
//! Option<Ir>`: `None` when the operator has nothing to work on in this graph (no knob
//! to move, no chain to parallelize). A returned graph is not yet checked: that is
//! [`generate`](super::generate)'s job, so an operator stays a plain graph edit.

use std::fmt;

use factory_compiler::ir::Ir;

use super::source::Source;
use super::{forks, params, structure};

/// A mutation operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    NodeInsert,
    NodeRemove,
    EdgeRedirect,
    Parallelize,
    Serialize,
    ParamMutate,
    PromptMutate,
    KnobMutate,
}

impl Op {
    /// Every operator, in the order they are listed and reported.
    pub const ALL: [Op; 8] = [
        Op::NodeInsert,
        Op::NodeRemove,
        Op::EdgeRedirect,
        Op::Parallelize,
        Op::Serialize,
        Op::ParamMutate,
        Op::PromptMutate,
        Op::KnobMutate,
    ];

    /// The operator's name as written on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::NodeInsert => "NODE_INSERT",
            Op::NodeRemove => "NODE_REMOVE",
            Op::EdgeRedirect => "EDGE_REDIRECT",
            Op::Parallelize => "PARALLELIZE",
            Op::Serialize => "SERIALIZE",
            Op::ParamMutate => "PARAM_MUTATE",
            Op::PromptMutate => "PROMPT_MUTATE",
            Op::KnobMutate => "KNOB_MUTATE",
        }
    }

    /// An operator by name, in any case and with `-` or `_` (`node-insert`,
    /// `NODE_INSERT`).
    pub fn parse(text: &str) -> Option<Op> {
        let wanted = text.trim().to_ascii_uppercase().replace('-', "_");
        Op::ALL.into_iter().find(|op| op.name() == wanted)
    }

    /// Applies the operator to `ir`.
    pub fn apply(self, ir: &Ir, src: &mut Source) -> Option<Ir> {
        let f: fn(&Ir, &mut Source) -> Option<Ir> = match self {
            Op::NodeInsert => structure::node_insert,
            Op::NodeRemove => structure::node_remove,
            Op::EdgeRedirect => structure::edge_redirect,
            Op::Parallelize => forks::parallelize,
            Op::Serialize => forks::serialize,
            Op::ParamMutate => params::param_mutate,
            Op::PromptMutate => params::prompt_mutate,
            Op::KnobMutate => params::knob_mutate,
        };
        f(ir, src)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub use forks::{parallelize, serialize};
pub use params::{MODELS, REWRITES, TIMEOUTS, knob_mutate, param_mutate, prompt_mutate};
pub use structure::{edge_redirect, node_insert, node_remove};
