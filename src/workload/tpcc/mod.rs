//! TPC-C, relbench's own (issue 64): the parts built so far are the
//! specification's random numbers and strings (`rand`: NURand with its
//! constants fixed per run, last names, the data that says "ORIGINAL")
//! the transaction mix each client deals from (`mix`), the nine tables in
//! each engine's words (`schema`), the initial population, a warehouse
//! per connection (`load`), consistency conditions 1–4 (`check`), and
//! the five transactions a client runs against its home warehouse
//! (`client`, reading the values that drive them with
//! `Conn::query_rows`). The catalogue's steps, the plan's `[tpcc]`
//! section and the report's tpmC come next.

pub mod check;
pub mod client;
pub mod load;
pub mod mix;
pub mod rand;
pub mod schema;
