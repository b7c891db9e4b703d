//! The one `#pragma unroll` of mmm.cu's tiled kernel, found and replaced: how kernels/build.rs makes the
//! sources of lab-mmm's `--unroll` variants from mmm.cu without a copy of its code (the weeks'
//! starters are generated from mmm.cu, which stays as it is). Shared with build.rs (`#[path]`), so the
//! rules it builds by are tested here.

/// The line of mmm.cu that the variants replace: on the tiled kernel's inner product, it asks nvcc to
/// write out the BLOCK_SIZE multiply-adds one after another instead of looping over them.
pub const UNROLL_PRAGMA: &str = "#pragma unroll";

/// `text` with its [`UNROLL_PRAGMA`] line replaced by `line`, or why not: every `#pragma unroll` of
/// mmm.cu is counted, and there must be exactly one, as printed, inside the tiled kernel `mmm` and
/// right above a loop over BLOCK_SIZE. Anything else (a second pragma, an `unroll 4`, the pragma moved
/// away from the loop) stops the build rather than make variants that do not differ as they claim.
pub fn replace_pragma(text: &str, line: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let pragmas: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with(UNROLL_PRAGMA))
        .collect();
    let &[at] = &pragmas[..] else {
        return Err(format!(
            "{} lines start with `{UNROLL_PRAGMA}`, not exactly one",
            pragmas.len()
        ));
    };
    if lines[at].trim() != UNROLL_PRAGMA {
        return Err(format!(
            "line {} is `{}`, not `{UNROLL_PRAGMA}`",
            at + 1,
            lines[at].trim()
        ));
    }
    // The tiled kernel's body: from its signature to the first closing brace in column 0.
    let start = lines
        .iter()
        .position(|l| l.starts_with("__device__ void mmm("))
        .ok_or("no `__device__ void mmm(` (the tiled kernel)")?;
    let end = (start..lines.len())
        .find(|&i| lines[i] == "}")
        .ok_or("the tiled kernel `mmm` does not end")?;
    if !(start < at && at < end) {
        return Err(format!(
            "`{UNROLL_PRAGMA}` (line {}) is not inside the tiled kernel `mmm` (lines {} to {})",
            at + 1,
            start + 1,
            end + 1
        ));
    }
    let next = lines[at + 1..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map_or("", |l| l.trim());
    if !(next.starts_with("for (") && next.contains("BLOCK_SIZE")) {
        return Err(format!(
            "the line after `{UNROLL_PRAGMA}` (line {}) is `{next}`, not a loop over BLOCK_SIZE",
            at + 1
        ));
    }
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[at] = format!("{indent}{line}");
    let mut derived = out.join("\n");
    if text.ends_with('\n') {
        derived.push('\n');
    }
    Ok(derived)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiled kernel shaped as mmm.cu's: the pragma inside `mmm`, on a loop over BLOCK_SIZE.
    fn kernel(pragma: &str) -> String {
        format!(
            "__device__ void mmm_ab(int x) {{\n}}\n\n__device__ void mmm(int x) {{\n    int sum = 0;\n{pragma}\n        for (int j = 0; j < BLOCK_SIZE; j++) {{\n            sum += j;\n        }}\n}}\n"
        )
    }

    #[test]
    fn the_one_pragma_is_replaced_and_nothing_else_changes() {
        let text = kernel("#pragma unroll");
        let derived = replace_pragma(&text, "#pragma unroll 1").unwrap();
        let changed: Vec<(&str, &str)> = text.lines().zip(derived.lines()).filter(|(a, b)| a != b).collect();
        assert_eq!(changed, [("#pragma unroll", "#pragma unroll 1")]);
        assert_eq!(text.lines().count(), derived.lines().count());
        assert!(derived.ends_with("}\n"));
        // The indentation stays.
        let indented = kernel("        #pragma unroll");
        assert!(replace_pragma(&indented, "// gone")
            .unwrap()
            .contains("\n        // gone\n"));
    }

    #[test]
    fn anything_but_exactly_one_pragma_on_the_tiled_loop_stops_the_build() {
        let why = |text: &str| replace_pragma(text, "#pragma unroll 1").unwrap_err();
        assert!(
            why(&kernel("")).starts_with("0 lines start with"),
            "{}",
            why(&kernel(""))
        );
        let twice = kernel("#pragma unroll").replace("int sum = 0;", "int sum = 0;\n#pragma unroll");
        assert!(why(&twice).starts_with("2 lines start with"), "{}", why(&twice));
        assert!(why(&kernel("#pragma unroll 4")).contains("not `#pragma unroll`"));
        let naive = kernel("").replace(
            "mmm_ab(int x) {\n",
            "mmm_ab(int x) {\n#pragma unroll\n    for (int j = 0; j < BLOCK_SIZE; j++) {}\n",
        );
        assert!(why(&naive).contains("not inside the tiled kernel"), "{}", why(&naive));
        let off_the_loop = kernel("#pragma unroll").replace("for (int j = 0; j < BLOCK_SIZE; j++)", "while (true)");
        assert!(
            why(&off_the_loop).contains("not a loop over BLOCK_SIZE"),
            "{}",
            why(&off_the_loop)
        );
        let no_tiled = kernel("#pragma unroll").replace("void mmm(", "void tiled(");
        assert!(why(&no_tiled).contains("no `__device__ void mmm(`"));
    }
}
