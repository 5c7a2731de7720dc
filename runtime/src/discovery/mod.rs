//! First-run project introspection and the eval profile (spec §8.6).

pub mod introspect;
