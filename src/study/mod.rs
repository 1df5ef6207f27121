//! A study's policies over a run: what to measure next, decided from the
//! step files measured so far, and run as passes of the run's own session
//! (`runner::Session`). The command line only parses and prints; the
//! rounds of `repeats = "auto"` are `adaptive.rs`.

pub mod adaptive;
