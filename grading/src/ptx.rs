//! What a kernel's PTX shows that the ptxas report does not (issue 29, the rules of `--check`):
//! whether its barriers sit inside a loop, and whether it launches kernels itself.
//!
//! ```text
//! .visible .entry mmm_f32(            a kernel; `.func` for a device function
//! {
//! $L__BB2_2:                          a label; a branch back to it closes a loop
//!     bar.sync    0;                  __syncthreads()
//!     @%p3 bra    $L__BB2_2;
//!     call.uni (retval0),
//!     __cudaCDP2LaunchDeviceV2,       a kernel launched from the device (<<<...>>> in device code)
//! }
//! ```
//!
//! Calls count: a barrier or a launch in a device function that a kernel calls (from within a loop,
//! for the barrier) counts as the kernel's.

use std::collections::HashSet;

/// One function of a PTX module: a kernel (`.entry`) or a device function (`.func`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    /// The lines between the function's `{` and `}`, trimmed.
    body: Vec<String>,
}

/// The functions of `ptx` that have a body (declarations of external functions have none).
pub fn functions(ptx: &str) -> Vec<Function> {
    let mut functions = Vec::new();
    let mut pending: Option<(String, bool)> = None;
    let mut body: Option<Vec<String>> = None;
    for line in ptx.lines() {
        if let Some(lines) = body.as_mut() {
            if line == "}" {
                let (name, is_entry) = pending.take().unwrap_or_default();
                functions.push(Function {
                    name,
                    is_entry,
                    body: body.take().unwrap_or_default(),
                });
            } else {
                // Comments say nothing about the code: an `asm("// __cudaCDP2LaunchDeviceV2")` is
                // no launch (issue 39).
                let code = line.split("//").next().unwrap_or("").trim();
                if !code.is_empty() {
                    lines.push(code.to_string());
                }
            }
        } else if let Some(header) = header(line) {
            pending = Some(header);
        } else if pending.is_some() && line == "{" {
            body = Some(Vec::new());
        } else if pending.is_some() && line.trim_end().ends_with(';') {
            pending = None; // a declaration, not a definition
        }
    }
    functions
}

/// `(name, is_entry)` of a line that begins a function: `.visible .entry name(`, `.weak .entry
/// name(`, `.func (.param .b32 func_retval0) name(`, but not `.extern .func ...`.
fn header(line: &str) -> Option<(String, bool)> {
    if line.starts_with("//") || line.contains(".extern") {
        return None;
    }
    let (rest, is_entry) = match (line.find(".entry "), line.find(".func ")) {
        (Some(at), _) => (&line[at + ".entry ".len()..], true),
        (None, Some(at)) => (&line[at + ".func ".len()..], false),
        (None, None) => return None,
    };
    let mut rest = rest.trim_start();
    if rest.starts_with('(') {
        rest = rest[rest.find(')')? + 1..].trim_start(); // the return value's parameter
    }
    let name: String = rest.chars().take_while(|&c| is_identifier_char(c)).collect();
    (!name.is_empty()).then_some((name, is_entry))
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_$.".contains(c)
}

fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !is_identifier_char(c))
        .filter(|word| !word.is_empty())
}

/// The line's instruction without its predicate (`@%p1`, `@!%p1`): `bra.uni`, `bar.sync`, ...
fn instruction(line: &str) -> &str {
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or("");
    if first.starts_with('@') {
        words.next().unwrap_or("")
    } else {
        first
    }
}

/// A barrier the whole block waits at: `bar.sync`, `barrier.sync`, `bar.red` (__syncthreads and its
/// kin); not `bar.warp.sync` (__syncwarp, one warp), not an arrival that does not wait, not a
/// cluster's barrier (issue 39: a `__syncwarp()` in the loop passed for a tiled kernel's barrier).
fn is_block_barrier(line: &str) -> bool {
    let op = instruction(line);
    (op.starts_with("bar.") || op.starts_with("barrier."))
        && !["bar.warp", "bar.arrive", "barrier.arrive", "barrier.cluster"]
            .iter()
            .any(|prefix| op.starts_with(prefix))
}

/// A load through a generic pointer: `ld` with no state space among its qualifiers.
fn is_generic_load(line: &str) -> bool {
    let op = instruction(line);
    let mut parts = op.split('.');
    parts.next() == Some("ld")
        && !parts.any(|part| {
            [
                "global",
                "shared",
                "shared::cta",
                "shared::cluster",
                "local",
                "const",
                "param",
            ]
            .contains(&part)
        })
}

/// Where a kernel's barriers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Barriers {
    None,
    OutsideLoops,
    InLoop,
}

/// A module's functions, to follow calls from one to another.
pub struct Module {
    functions: Vec<Function>,
}

impl Module {
    pub fn parse(ptx: &str) -> Module {
        Module {
            functions: functions(ptx),
        }
    }

    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|function| function.is_entry)
    }

    pub fn entry(&self, name: &str) -> Option<&Function> {
        self.entries().find(|function| function.name == name)
    }

    /// The module's functions that `line` calls.
    fn callees<'a>(&'a self, line: &'a str) -> impl Iterator<Item = &'a Function> {
        identifiers(line).filter_map(|word| {
            self.functions
                .iter()
                .find(|function| !function.is_entry && function.name == word)
        })
    }

    /// True if `function`, or a function it calls, passes the lines for which `found` is true.
    fn reaches(&self, function: &Function, found: &dyn Fn(&str) -> bool, seen: &mut HashSet<String>) -> bool {
        if !seen.insert(function.name.clone()) {
            return false;
        }
        function
            .body
            .iter()
            .any(|line| found(line) || self.callees(line).any(|callee| self.reaches(callee, found, seen)))
    }

    fn line_reaches(&self, line: &str, found: &dyn Fn(&str) -> bool) -> bool {
        found(line)
            || self
                .callees(line)
                .any(|callee| self.reaches(callee, found, &mut HashSet::new()))
    }

    /// Whether `function` waits at a block barrier, and whether one lies inside a loop: between a
    /// label and a later branch back to it.
    pub fn barriers(&self, function: &Function) -> Barriers {
        let loops = loops(&function.body);
        let barrier_at = |index: usize| self.line_reaches(&function.body[index], &is_block_barrier);
        let barrier_lines: Vec<usize> = (0..function.body.len()).filter(|&index| barrier_at(index)).collect();
        if barrier_lines.is_empty() {
            Barriers::None
        } else if barrier_lines
            .iter()
            .any(|line| loops.iter().any(|(start, end)| (start..=end).contains(&line)))
        {
            Barriers::InLoop
        } else {
            Barriers::OutsideLoops
        }
    }

    /// How many loads in `function` (and the functions it calls) go through a generic pointer, one
    /// whose memory space the compiler did not know: `ld.f64`, `ld.v2.u32`, not `ld.global.f64` or
    /// `ld.shared.f64`. The hardware's count of global loads (`--check`'s measured rule) leaves them
    /// out, so a kernel that hid its global loads behind a generic pointer would pass it (issue 39).
    /// External functions (`vprintf`) have no body here and are not counted.
    pub fn generic_loads(&self, function: &Function) -> usize {
        let mut seen = HashSet::new();
        self.count(function, &is_generic_load, &mut seen)
    }

    fn count(&self, function: &Function, found: &dyn Fn(&str) -> bool, seen: &mut HashSet<String>) -> usize {
        if !seen.insert(function.name.clone()) {
            return 0;
        }
        function
            .body
            .iter()
            .map(|line| {
                usize::from(found(line))
                    + self
                        .callees(line)
                        .map(|callee| self.count(callee, found, seen))
                        .sum::<usize>()
            })
            .sum()
    }

    /// Whether `function` launches a kernel from the device (the device runtime's `LaunchDevice`
    /// call, which `<<<...>>>` in device code becomes), itself or in a function it calls.
    pub fn launches_kernels(&self, function: &Function) -> bool {
        let launch = |line: &str| identifiers(line).any(|word| word.contains("LaunchDevice"));
        self.reaches(function, &launch, &mut HashSet::new())
    }
}

/// `(label line, branch line)` of every branch back to an earlier label: the loops.
fn loops(body: &[String]) -> Vec<(usize, usize)> {
    let labels: Vec<(usize, &str)> = body
        .iter()
        .enumerate()
        .filter_map(|(index, line)| Some((index, line.strip_suffix(':')?)))
        .filter(|(_, name)| identifiers(name).count() == 1)
        .collect();
    body.iter()
        .enumerate()
        .filter(|(_, line)| instruction(line).starts_with("bra"))
        .filter_map(|(index, line)| {
            let target = identifiers(line).last()?;
            labels
                .iter()
                .find(|(at, name)| *name == target && *at < index)
                .map(|(at, _)| (*at, index))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TILED: &str = r#"
.visible .entry tiled(
	.param .u64 tiled_param_0
)
{
	.shared .align 4 .b8 as[1024];
$L__BB0_2:
	st.shared.f32 	[%r8], %f60;
	bar.sync 	0;
	ld.shared.f32 	%f12, [%r11];
	bar.sync 	0;
	@%p7 bra 	$L__BB0_2;
	ret;
}
"#;

    const NAIVE: &str = r#"
.visible .entry naive(
	.param .u64 naive_param_0
)
{
	@%p1 bra 	$L__BB1_3;
$L__BB1_2:
	fma.rn.f32 	%f1, %f2, %f3, %f1;
	@%p2 bra 	$L__BB1_2;
$L__BB1_3:
	bar.sync 	0;
	ret;
}
"#;

    /// A barrier in a device function called from a loop; a launch in a device function.
    const CALLS: &str = r#"
.extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 __cudaCDP2LaunchDeviceV2_param_0
)
;
.func wait_here(
	.param .b32 wait_here_param_0
);
.func  (.param .b32 func_retval0) spawn(
	.param .b64 spawn_param_0
)
{
	call.uni (retval0), 
	__cudaCDP2LaunchDeviceV2, 
	(
	param0
	);
	ret;
}
.func wait_here(
	.param .b32 wait_here_param_0
)
{
	barrier.sync 	0;
	ret;
}
.weak .entry _Z7workersI4SineEvdddddiiP5Tally(
	.param .f64 p
)
{
$L__BB3_1:
	call.uni 
	wait_here, 
	(
	param0
	);
	@%p1 bra.uni 	$L__BB3_1;
	call.uni (retval0), 
	spawn, 
	(
	param0
	);
	ret;
}
"#;

    #[test]
    fn finds_kernels_and_device_functions_but_not_declarations() {
        let names: Vec<(String, bool)> = functions(CALLS).into_iter().map(|f| (f.name, f.is_entry)).collect();
        assert_eq!(
            names,
            [
                ("spawn".to_string(), false),
                ("wait_here".to_string(), false),
                ("_Z7workersI4SineEvdddddiiP5Tally".to_string(), true)
            ]
        );
    }

    #[test]
    fn a_barrier_between_a_label_and_the_branch_back_is_in_a_loop() {
        let module = Module::parse(&format!("{TILED}{NAIVE}"));
        assert_eq!(module.barriers(module.entry("tiled").unwrap()), Barriers::InLoop);
        // A forward branch and a loop without the barrier: outside every loop.
        assert_eq!(module.barriers(module.entry("naive").unwrap()), Barriers::OutsideLoops);
        let no_barrier = TILED.replace("bar.sync \t0;", "add.s32 %r1, %r1, 1;");
        let warp_only = TILED.replace("bar.sync \t0;", "bar.warp.sync \t-1;");
        let module = Module::parse(&warp_only);
        assert_eq!(
            module.barriers(module.entry("tiled").unwrap()),
            Barriers::None,
            "__syncwarp() is no block barrier"
        );
        let arrive = TILED.replace("bar.sync \t0;", "barrier.arrive \t0, 256;");
        assert_eq!(
            Module::parse(&arrive).barriers(Module::parse(&arrive).entry("tiled").unwrap()),
            Barriers::None,
            "an arrival does not wait"
        );
        let module = Module::parse(&no_barrier);
        assert_eq!(module.barriers(module.entry("tiled").unwrap()), Barriers::None);
    }

    #[test]
    fn loads_through_generic_pointers_are_counted_and_those_with_a_space_are_not() {
        let code = TILED.replace("ld.shared.f32 \t%f12, [%r11];", "ld.shared.f32 \t%f12, [%r11];\n\tld.global.nc.f64 \t%fd1, [%rd1];\n\tld.volatile.global.f64 \t%fd1, [%rd1];\n\tld.f64 \t%fd2, [%rd2];\n\t@%p1 ld.v2.u32 \t{%r1, %r2}, [%rd3];\n\tldu.global.f64 \t%fd1, [%rd1];");
        let module = Module::parse(&code);
        assert_eq!(module.generic_loads(module.entry("tiled").unwrap()), 2);
        assert_eq!(
            Module::parse(TILED).generic_loads(Module::parse(TILED).entry("tiled").unwrap()),
            0
        );
    }

    #[test]
    fn calls_carry_barriers_and_launches_to_the_kernel() {
        let module = Module::parse(CALLS);
        let workers = module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap();
        assert_eq!(module.barriers(workers), Barriers::InLoop);
        assert!(module.launches_kernels(workers));
        let commented = CALLS.replace("\tspawn, \n", "\t// spawn, __cudaCDP2LaunchDeviceV2\n\tother, \n");
        let module = Module::parse(&commented);
        assert!(
            !module.launches_kernels(module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap()),
            "a launch in a comment is none"
        );
        let module = Module::parse(&CALLS.replace("\tspawn, \n", "\tother, \n"));
        assert!(!module.launches_kernels(module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap()));
        assert!(!Module::parse(TILED).launches_kernels(Module::parse(TILED).entry("tiled").unwrap()));
    }
}
