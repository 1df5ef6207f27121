//! TPC-C, relbench's own (specification revision 5.11): the
//! specification's random numbers and strings (`rand`: NURand with its
//! constants fixed, last names, the data that says "ORIGINAL"), the
//! transaction mix each client deals from (`mix`), the nine tables in
//! each engine's words (`schema`), the initial population, a warehouse
//! per connection (`load`), consistency conditions 1–4 (`check`), the
//! five transactions a client runs against its home warehouse
//! (`client`, reading the values that drive them with
//! `Conn::query_rows`), the plan's `[tpcc]` (`params`) and the three
//! catalogue steps (`step`: `tpcc.load`, `tpcc.run`, `tpcc.check`);
//! the statements, in go-tpc's shapes, are in `sql`.

pub mod check;
pub mod client;
pub mod load;
pub mod mix;
pub mod params;
pub mod rand;
pub mod schema;
pub mod sql;
pub mod step;

pub use params::{Params, KEYS};
pub use step::{kind, steps, Kind, Step, SEQUENCE};
