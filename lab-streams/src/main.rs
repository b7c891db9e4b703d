//! lab-streams: not written yet (issue #4).
fn main() -> std::process::ExitCode {
    eprintln!("lab-streams: error: this lab is not written yet (issue #4)");
    std::process::ExitCode::FAILURE
}
