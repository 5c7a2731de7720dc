//! The project: where `.factory/` files live, `factory.md` config, and the per-user
//! registry of projects.

pub mod child;
pub mod config;
pub mod layout;
pub mod registry;
pub mod roots;
