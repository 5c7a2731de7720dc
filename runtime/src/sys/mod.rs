//! Operating-system helpers with no factory concepts: atomic files and locks, and
//! subprocesses whose timeout kills the whole process group.

pub mod async_process;
pub mod clock;
pub mod death_watch;
pub mod files;
pub mod pattern;
pub mod placer;
pub mod process;
pub mod progress;
pub mod redact;
