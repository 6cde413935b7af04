//! The kerf binary: parse the command line, run it, map failures to exit codes.

use clap::Parser;

fn main() {
    let cli = kerf::cli::Cli::parse();
    if let Err(exit) = kerf::cli::run(cli) {
        kerf::commands::exit_with(exit);
    }
}
