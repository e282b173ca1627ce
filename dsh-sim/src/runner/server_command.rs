//! The command lines dsh-sim starts as the server: the fake, run from a dsh-sim binary's
//! `fake-server` subcommand, and any server behind the tap that journals the client side.

use std::path::Path;

use antigravity_acp::ServerCommand;

/// `command` run behind `<tap> tap --journal DIR -- …`, the client-side journal.
pub fn tapped_command(tap: &Path, command: &ServerCommand, journal_dir: &Path) -> ServerCommand {
    let mut args = vec![
        "tap".to_owned(),
        "--journal".to_owned(),
        journal_dir.display().to_string(),
        "--".to_owned(),
        command.program.display().to_string(),
    ];
    args.extend(command.args.iter().cloned());
    ServerCommand {
        program: tap.to_owned(),
        args,
        env: command.env.clone(),
    }
}

/// The command line that runs the fake from a dsh-sim binary.
pub fn fake_command(program: &Path, script: &Path, journal_dir: &Path) -> ServerCommand {
    ServerCommand {
        program: program.to_owned(),
        args: vec![
            "fake-server".to_owned(),
            "--script".to_owned(),
            script.display().to_string(),
            "--journal".to_owned(),
            journal_dir.display().to_string(),
        ],
        env: Vec::new(),
    }
}
