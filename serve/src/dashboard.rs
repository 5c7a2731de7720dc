//! The web dashboard (`factory dashboard`).
