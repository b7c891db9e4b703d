//! lab-constant-tracer: not written yet (issue #6).
fn main() -> std::process::ExitCode {
    eprintln!("lab-constant-tracer: error: this lab is not written yet (issue #6)");
    std::process::ExitCode::FAILURE
}
