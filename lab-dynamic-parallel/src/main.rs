//! lab-dynamic-parallel: not written yet (issue #7).
fn main() -> std::process::ExitCode {
    eprintln!("lab-dynamic-parallel: error: this lab is not written yet (issue #7)");
    std::process::ExitCode::FAILURE
}
