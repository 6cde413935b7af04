//! The kerf binary: parse the command line, run it, map failures to exit codes.

use clap::Parser;

fn main() {
    let cli = kerf::cli::Cli::parse();
    if let Err(exit) = kerf::cli::run(cli) {
        let line = exit.message.lines().next().unwrap_or("failed").to_string();
        eprintln!("kerf: {line}");
        std::process::exit(exit.code);
    }
}
