//! The `fake-antigravity` binary: a thin wrapper over [`fake_antigravity::main_with_args`].

fn main() -> std::process::ExitCode {
    fake_antigravity::main_with_args(std::env::args_os().skip(1))
}
