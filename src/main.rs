//! relbench: parse the command line, run, exit with a documented code
//! (see `relbench --help`).

fn main() -> std::process::ExitCode {
    relbench::cli::main()
}
