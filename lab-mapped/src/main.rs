//! lab-mapped: not written yet (issue #5).
fn main() -> std::process::ExitCode {
    eprintln!("lab-mapped: error: this lab is not written yet (issue #5)");
    std::process::ExitCode::FAILURE
}
