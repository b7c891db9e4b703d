//! Parser for the report `nvcc --ptxas-options=-v` writes, in today's format and the Fermi-era one of
//! the slides:
//!
//! ```text
//! ptxas info    : Compiling entry function '_Z7simpsonddPd' for 'sm_90'
//! ptxas info    : Function properties for _Z7simpsonddPd
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 31 registers, used 0 barriers, 8192 bytes smem, 368 bytes cmem[0]
//! ```
//!
//! Registers and shared memory limit how many threads fit on a multiprocessor; stack frame and spills
//! are local memory, which lives in slow device memory; `cmem[0]` holds the kernel's parameters
//! (nvcc 13 leaves it out for sm_90, still prints it for sm_75), other banks the constants (`cmem[3]` is `__constant__` data on Hopper,
//! `cmem[16]` compiler constants on Fermi).

use std::fmt;

/// The numbers ptxas gave for one function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionResources {
    /// Name as compiled: mangled for C++ kernels (`_Z7simpsonddPd`), plain for `extern "C"`.
    pub name: String,
    /// `sm_90`, ...; `None` for a device function that is not an entry point.
    pub arch: Option<String>,
    pub registers: u32,
    /// Named barriers (`__syncthreads` uses one); old reports do not say.
    pub barriers: Option<u32>,
    pub stack_frame_bytes: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    /// Static `__shared__` bytes per block (`smem`).
    pub shared_bytes: u32,
    /// Local memory bytes per thread (`lmem`, old reports only; new ones say "stack frame").
    pub local_bytes: u32,
    /// `(bank, bytes)` for each `cmem[bank]` item.
    pub constant_banks: Vec<(u32, u32)>,
    /// The report's own lines for this function, for printing as the compiler wrote them.
    pub lines: Vec<String>,
}

impl FunctionResources {
    /// A kernel (`__global__`), as opposed to a device function ptxas reports on its own.
    pub fn is_entry(&self) -> bool {
        self.arch.is_some()
    }

    /// Bytes of constant memory over all banks.
    pub fn constant_bytes(&self) -> u32 {
        self.constant_banks.iter().map(|(_, bytes)| bytes).sum()
    }
}

/// A whole report: the module's globals and one entry per function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// `N bytes gmem` of the module (`__device__` globals).
    pub global_bytes: u32,
    /// Module-wide `cmem[bank]` items (`__constant__` data).
    pub constant_banks: Vec<(u32, u32)>,
    pub functions: Vec<FunctionResources>,
}

/// A line the parser did not understand.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// 1-based line number in the report.
    pub line: usize,
    pub text: String,
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ptxas report line {}: {} ({:?})", self.line, self.reason, self.text)
    }
}

impl std::error::Error for ParseError {}

impl Report {
    /// Parses everything nvcc printed; lines that are not part of the report (warnings) are skipped.
    pub fn parse(text: &str) -> Result<Report, ParseError> {
        let mut report = Report::default();
        let mut current: Option<usize> = None;
        for (index, raw) in text.lines().enumerate() {
            let error = |reason: String| ParseError {
                line: index + 1,
                text: raw.to_string(),
                reason,
            };
            let line = raw.trim();
            let info = line
                .strip_prefix("ptxas info")
                .map(|rest| rest.trim_start().trim_start_matches(':').trim());
            match info {
                Some(info) => {
                    if let Some(rest) = info.strip_prefix("Compiling entry function") {
                        let (name, arch) =
                            parse_entry(rest).ok_or_else(|| error("expected 'NAME' for 'sm_XX'".into()))?;
                        let index = report.function_index(&name);
                        report.functions[index].arch = Some(arch);
                        current = Some(index);
                    } else if let Some(name) = info.strip_prefix("Function properties for") {
                        current = Some(report.function_index(name.trim()));
                    } else if info.starts_with("Used") {
                        let index = current.ok_or_else(|| error("'Used' before any function".into()))?;
                        parse_usage(info, &mut report.functions[index]).map_err(error)?;
                    } else if info.ends_with("gmem") || info.contains("cmem[") {
                        parse_module_line(info, &mut report).map_err(error)?;
                        current = None;
                        continue;
                    } else {
                        // "Compile time = ...", "Compiling device function ..." and the like.
                        continue;
                    }
                }
                None if line.contains("bytes stack frame") => {
                    let index = current.ok_or_else(|| error("stack frame line before any function".into()))?;
                    parse_properties(line, &mut report.functions[index]).map_err(error)?;
                }
                None => continue,
            }
            if let Some(index) = current {
                report.functions[index].lines.push(raw.to_string());
            }
        }
        Ok(report)
    }

    /// The function compiled under this name (mangled for C++ kernels).
    pub fn function(&self, name: &str) -> Option<&FunctionResources> {
        self.functions.iter().find(|function| function.name == name)
    }

    fn function_index(&mut self, name: &str) -> usize {
        match self.functions.iter().position(|function| function.name == name) {
            Some(index) => index,
            None => {
                self.functions.push(FunctionResources {
                    name: name.to_string(),
                    ..Default::default()
                });
                self.functions.len() - 1
            }
        }
    }
}

/// `'_Z7simpsonddPd' for 'sm_90'` into name and architecture.
fn parse_entry(rest: &str) -> Option<(String, String)> {
    let mut quoted = rest.split('\'').skip(1).step_by(2);
    let name = quoted.next()?.to_string();
    let arch = quoted.next()?.to_string();
    Some((name, arch))
}

/// `0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads`
fn parse_properties(line: &str, function: &mut FunctionResources) -> Result<(), String> {
    for item in line.split(',') {
        let (number, what) = number_and_rest(item)?;
        match what.trim_start_matches("bytes").trim() {
            "stack frame" => function.stack_frame_bytes = number,
            "spill stores" => function.spill_stores = number,
            "spill loads" => function.spill_loads = number,
            other => return Err(format!("unknown property {other:?}")),
        }
    }
    Ok(())
}

/// `Used 31 registers, used 1 barriers, 8192 bytes smem, 368 bytes cmem[0], 12 bytes cmem[16]`
fn parse_usage(info: &str, function: &mut FunctionResources) -> Result<(), String> {
    for item in info.split(',') {
        let item = item.trim();
        if let Some(rest) = item.strip_prefix("Used").or_else(|| item.strip_prefix("used")) {
            let (number, what) = number_and_rest(rest)?;
            match what {
                "registers" => function.registers = number,
                "barriers" => function.barriers = Some(number),
                other => return Err(format!("unknown count {other:?}")),
            }
            continue;
        }
        let (number, what) = number_and_rest(item)?;
        match what.trim_start_matches("bytes").trim() {
            "smem" => function.shared_bytes = number,
            "lmem" => function.local_bytes = number,
            bank if bank.starts_with("cmem[") => function.constant_banks.push((parse_bank(bank)?, number)),
            // Textures, samplers, surfaces: not used by these labs.
            _ => {}
        }
    }
    Ok(())
}

/// `4 bytes gmem, 4 bytes cmem[3]` before the first function.
fn parse_module_line(info: &str, report: &mut Report) -> Result<(), String> {
    for item in info.split(',') {
        let (number, what) = number_and_rest(item)?;
        match what.trim_start_matches("bytes").trim() {
            "gmem" => report.global_bytes = number,
            bank if bank.starts_with("cmem[") => report.constant_banks.push((parse_bank(bank)?, number)),
            other => return Err(format!("unknown module item {other:?}")),
        }
    }
    Ok(())
}

fn number_and_rest(item: &str) -> Result<(u32, &str), String> {
    let item = item.trim();
    let (number, rest) = item
        .split_once(' ')
        .ok_or_else(|| format!("expected 'NUMBER what' in {item:?}"))?;
    let number = number.parse().map_err(|_| format!("{number:?} is not a number"))?;
    Ok((number, rest.trim()))
}

fn parse_bank(bank: &str) -> Result<u32, String> {
    bank.trim_start_matches("cmem[")
        .trim_end_matches(']')
        .parse()
        .map_err(|_| format!("bad constant bank {bank:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the slide shows, from nvcc for sm_20 (Fermi).
    const SLIDE: &str = "\
ptxas info : Compiling entry function '_Z7simpsonddPd' for 'sm_20'
ptxas info : Function properties for _Z7simpsonddPd
0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info : Used 25 registers, 56 bytes cmem[0], 12 bytes cmem[16]
";

    /// nvcc 13.0 for sm_90, two kernels and a `__device__ float[4]`, as captured on the build machine.
    const CUDA13: &str = "\
ptxas info    : 16 bytes gmem
ptxas info    : Compiling entry function '_Z1tILi16EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z1tILi16EEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 22.179 ms
ptxas info    : Compiling entry function '_Z7simpsonddPd' for 'sm_90'
ptxas info    : Function properties for _Z7simpsonddPd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 31 registers, used 0 barriers
ptxas info    : Compile time = 13.812 ms
";

    #[test]
    fn reads_the_slides_fermi_report() {
        let report = Report::parse(SLIDE).unwrap();
        let simpson = report.function("_Z7simpsonddPd").unwrap();
        assert_eq!(simpson.arch.as_deref(), Some("sm_20"));
        assert_eq!(simpson.registers, 25);
        assert_eq!(simpson.barriers, None);
        assert_eq!(simpson.constant_banks, vec![(0, 56), (16, 12)]);
        assert_eq!(simpson.constant_bytes(), 68);
        assert_eq!(
            (simpson.stack_frame_bytes, simpson.spill_stores, simpson.spill_loads),
            (0, 0, 0)
        );
        assert_eq!(
            simpson.lines.len(),
            4,
            "every line belongs to the kernel: {:?}",
            simpson.lines
        );
    }

    #[test]
    fn reads_todays_report_with_module_constants_and_two_kernels() {
        let report = Report::parse(CUDA13).unwrap();
        assert_eq!(report.global_bytes, 16);
        assert_eq!(report.functions.len(), 2);
        let tiled = report.function("_Z1tILi16EEvPf").unwrap();
        assert_eq!(
            (tiled.registers, tiled.barriers, tiled.shared_bytes),
            (14, Some(1), 1024)
        );
        let simpson = report.function("_Z7simpsonddPd").unwrap();
        assert_eq!(
            (simpson.registers, simpson.barriers, simpson.shared_bytes),
            (31, Some(0), 0)
        );
        assert!(simpson.lines.iter().all(|line| !line.contains("Compile time")));
    }

    #[test]
    fn reads_module_constants_as_older_nvcc_printed_them() {
        let report = Report::parse("ptxas info    : 0 bytes gmem, 4 bytes cmem[3]\n").unwrap();
        assert_eq!((report.global_bytes, report.constant_banks), (0, vec![(3, 4)]));
    }

    #[test]
    fn reads_spills_and_local_memory() {
        let text = "\
ptxas info    : Compiling entry function 'heavy' for 'sm_90'
ptxas info    : Function properties for heavy
    96 bytes stack frame, 40 bytes spill stores, 44 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 368 bytes cmem[0]
";
        let heavy = &Report::parse(text).unwrap().functions[0];
        assert_eq!(
            (heavy.stack_frame_bytes, heavy.spill_stores, heavy.spill_loads),
            (96, 40, 44)
        );
        assert_eq!((heavy.registers, heavy.constant_bytes()), (255, 368));
    }

    #[test]
    fn skips_warnings_around_the_report() {
        let text = format!("simpson.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n{SLIDE}");
        assert_eq!(Report::parse(&text).unwrap().functions.len(), 1);
    }

    #[test]
    fn names_the_line_of_a_malformed_number() {
        let text = SLIDE.replace("Used 25 registers", "Used many registers");
        let err = Report::parse(&text).unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.to_string().contains("\"many\" is not a number"), "{err}");
    }

    #[test]
    fn refuses_usage_before_any_function() {
        let err = Report::parse("ptxas info    : Used 3 registers\n").unwrap_err();
        assert_eq!(err.line, 1);
    }
}
