//! lab-pinned: not written yet (issue #5).
fn main() -> std::process::ExitCode {
    eprintln!("lab-pinned: error: this lab is not written yet (issue #5)");
    std::process::ExitCode::FAILURE
}
