//! The project: where `.factory/` files live, `factory.md` config, the project's state,
//! and the per-user registry of projects.

pub mod config;
pub mod doctor;
pub mod layout;
pub mod pristine;
pub mod registry;
pub mod state;
