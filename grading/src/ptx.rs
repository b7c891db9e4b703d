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
//! for the barrier) counts as the kernel's. The text is read as ptxas reads it, statement by
//! statement (split at `;`, comments dropped, inline assembly's braces nested), not line by line: a
//! student shapes PTX lines with `asm` strings (issue 61).

use std::collections::HashSet;

/// One function of a PTX module: a kernel (`.entry`) or a device function (`.func`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    /// The function's statements in order ([`statements`]): labels (`$L__BB2_2:`) and instructions.
    body: Vec<String>,
}

/// The functions of `ptx` that have a body (declarations of external functions have none). A body
/// runs from the `{` after the header to the `}` that closes it: braces of inline assembly
/// (`asm("{ ld.f64 ... }")`) and of vector operands (`{%r1, %r2}`) nest inside it (issue 61: a
/// line scanner took a body's first `}` line for its end and an asm block's statements for one word).
pub fn functions(ptx: &str) -> Vec<Function> {
    let ptx = without_comments(ptx);
    let mut functions = Vec::new();
    let mut pending: Option<(String, bool)> = None;
    let mut body: Option<(String, usize)> = None;
    for line in ptx.lines() {
        if let Some((text, depth)) = body.as_mut() {
            for c in line.chars() {
                match c {
                    '{' => *depth += 1,
                    '}' => *depth -= 1,
                    _ => {}
                }
                if *depth == 0 {
                    break;
                }
                text.push(c);
            }
            text.push('\n');
            if *depth == 0 {
                let (name, is_entry) = pending.take().unwrap_or_default();
                let (text, _) = body.take().unwrap_or_default();
                functions.push(Function {
                    name,
                    is_entry,
                    body: statements(&text),
                });
            }
        } else if let Some(header) = header(line) {
            pending = Some(header);
        } else if pending.is_some() && line.trim() == "{" {
            body = Some((String::new(), 1));
        } else if pending.is_some() && line.trim_end().ends_with(';') {
            pending = None; // a declaration, not a definition
        }
    }
    functions
}

/// `ptx` without its comments, `// ...` to the end of a line and `/* ... */` across lines, each
/// replaced by a space (line breaks kept): comments say nothing about the code, so an
/// `asm("/* __cudaCDP2LaunchDeviceV2 */")` is no launch (issues 39 and 61). Quoted text (the path of
/// a `.file` directive, which may hold `/*`) is code.
fn without_comments(ptx: &str) -> String {
    let mut code = String::with_capacity(ptx.len());
    let mut chars = ptx.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c, chars.peek()) {
            (false, '/', Some('/')) => {
                code.push(' ');
                while chars.next_if(|&next| next != '\n').is_some() {}
            }
            (false, '/', Some('*')) => {
                code.push(' ');
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        code.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => {
                quoted ^= c == '"';
                code.push(c);
            }
        }
    }
    code
}

/// The statements of a function body: its text split at every `;`, each statement's labels (`name:`,
/// not the `::` of `shared::cta`) split off as statements of their own, and the braces that open and
/// close inline assembly's scopes dropped from the start, whitespace joined. So
/// `{ .reg .f64 t; ld.f64 t, [%rd1]; }` gives `.reg .f64 t` and `ld.f64 t, [%rd1]`.
fn statements(body: &str) -> Vec<String> {
    let mut statements = Vec::new();
    for piece in body.split(';') {
        let mut rest = piece.trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '}');
        while let Some(label) = label(rest) {
            statements.push(format!("{label}:"));
            rest = rest[label.len() + 1..].trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '}');
        }
        let statement = rest.split_whitespace().collect::<Vec<_>>().join(" ");
        if !statement.is_empty() {
            statements.push(statement);
        }
    }
    statements
}

/// The label `text` begins with (`$L__BB2_2` of `$L__BB2_2: bar.sync 0`), if it begins with one.
fn label(text: &str) -> Option<&str> {
    let end = text.find(|c: char| !is_identifier_char(c))?;
    let rest = &text[end..];
    (end > 0 && rest.starts_with(':') && !rest.starts_with("::")).then(|| &text[..end])
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

/// Whether an instruction of `ptx`, in any function, reached or not, is one of `opcodes`: its opcode is
/// the opcode or begins with it and a `.` (`tex` in `tex.2d.v4.f32.f32`, `cp.async.bulk` in
/// `cp.async.bulk.tensor.2d...`), guarded or not. The measured rules ask ncu for a costly metric only
/// where the module can move it (issue 65, [`crate::measure::OptionalMetric`]). Instructions only, not
/// any word: a variable named `tex` (`.global .b8 tex[16]`) would otherwise make every measured run
/// on the GPU wait for this one ([`crate::gpu_lock::metric_set`]).
pub fn mentions(ptx: &str, opcodes: &[&str]) -> bool {
    functions(ptx)
        .iter()
        .flat_map(|function| &function.body)
        .any(|statement| {
            let opcode = instruction(statement);
            opcodes.iter().any(|wanted| {
                opcode
                    .strip_prefix(wanted)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            })
        })
}

fn identifiers(statement: &str) -> impl Iterator<Item = &str> {
    statement
        .split(|c: char| !is_identifier_char(c))
        .filter(|word| !word.is_empty())
}

/// The statement's instruction without its predicate (`@%p1`, `@!%p1`): `bra.uni`, `bar.sync`, ...
fn instruction(statement: &str) -> &str {
    let mut words = statement.split_whitespace();
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
fn is_block_barrier(statement: &str) -> bool {
    let op = instruction(statement);
    (op.starts_with("bar.") || op.starts_with("barrier."))
        && !["bar.warp", "bar.arrive", "barrier.arrive", "barrier.cluster"]
            .iter()
            .any(|prefix| op.starts_with(prefix))
}

/// A read through a generic pointer: a load (`ld`, `ldu`) or an atomic that reads and writes (`atom`,
/// `red`) with no state space among its qualifiers (issue 61: `atomicOr(p, 0)` reads as a load does).
fn is_generic_load(statement: &str) -> bool {
    let op = instruction(statement);
    let mut parts = op.split('.');
    matches!(parts.next(), Some("ld" | "ldu" | "atom" | "red"))
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

    /// The module's functions that `statement` calls.
    fn callees<'a>(&'a self, statement: &'a str) -> impl Iterator<Item = &'a Function> {
        identifiers(statement).filter_map(|word| {
            self.functions
                .iter()
                .find(|function| !function.is_entry && function.name == word)
        })
    }

    /// True if `function`, or a function it calls, passes the statements for which `found` is true.
    fn reaches(&self, function: &Function, found: &dyn Fn(&str) -> bool, seen: &mut HashSet<String>) -> bool {
        if !seen.insert(function.name.clone()) {
            return false;
        }
        function.body.iter().any(|statement| {
            found(statement) || self.callees(statement).any(|callee| self.reaches(callee, found, seen))
        })
    }

    fn statement_reaches(&self, statement: &str, found: &dyn Fn(&str) -> bool) -> bool {
        found(statement)
            || self
                .callees(statement)
                .any(|callee| self.reaches(callee, found, &mut HashSet::new()))
    }

    /// Whether `function` waits at a block barrier, and whether one lies inside a loop: between a
    /// label and a later branch back to it.
    pub fn barriers(&self, function: &Function) -> Barriers {
        let loops = loops(&function.body);
        let barrier_at = |index: usize| self.statement_reaches(&function.body[index], &is_block_barrier);
        let barrier_statements: Vec<usize> = (0..function.body.len()).filter(|&index| barrier_at(index)).collect();
        if barrier_statements.is_empty() {
            Barriers::None
        } else if barrier_statements
            .iter()
            .any(|statement| loops.iter().any(|(start, end)| (start..=end).contains(&statement)))
        {
            Barriers::InLoop
        } else {
            Barriers::OutsideLoops
        }
    }

    /// How many loads and atomics in `function` (and the functions it calls) go through a generic
    /// pointer, one whose memory space the compiler did not know: `ld.f64`, `ld.v2.u32`, `atom.or.b32`,
    /// not `ld.global.f64` or `ld.shared.f64`. Week 3's measured rule counts those that reach global
    /// memory, except where `mmm_f64` or `mmm_f32` prints (`printf` makes its own): there a kernel
    /// that hid its global loads behind a generic pointer would pass it (issues 39 and 61).
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
            .map(|statement| {
                usize::from(found(statement))
                    + self
                        .callees(statement)
                        .map(|callee| self.count(callee, found, seen))
                        .sum::<usize>()
            })
            .sum()
    }

    /// Whether `function` launches a kernel from the device (a `call` of the device runtime's
    /// `LaunchDevice` function, which `<<<...>>>` in device code becomes), itself or in a function it
    /// calls. The name elsewhere (a register, a label, a function of the module's own) is no launch.
    pub fn launches_kernels(&self, function: &Function) -> bool {
        self.calls_external(function, &|name| name.contains("LaunchDevice"))
    }

    /// Whether `function` prints, itself or in a function it calls: `printf` in device code is a
    /// `call` of the external `vprintf`.
    pub fn prints(&self, function: &Function) -> bool {
        self.calls_external(function, &|name| name == "vprintf")
    }

    /// Whether `function`, or a function it calls, has a `call` of a function the module does not
    /// define whose name `named` accepts.
    fn calls_external(&self, function: &Function, named: &dyn Fn(&str) -> bool) -> bool {
        let call = |statement: &str| {
            instruction(statement).starts_with("call")
                && identifiers(statement).any(|word| named(word) && !self.functions.iter().any(|f| f.name == word))
        };
        self.reaches(function, &call, &mut HashSet::new())
    }
}

/// `(label statement, branch statement)` of every branch back to an earlier label: the loops.
fn loops(body: &[String]) -> Vec<(usize, usize)> {
    let labels: Vec<(usize, &str)> = body
        .iter()
        .enumerate()
        .filter_map(|(index, statement)| Some((index, statement.strip_suffix(':')?)))
        .filter(|(_, name)| identifiers(name).count() == 1)
        .collect();
    body.iter()
        .enumerate()
        .filter(|(_, statement)| instruction(statement).starts_with("bra"))
        .filter_map(|(index, statement)| {
            let target = identifiers(statement).last()?;
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

    /// `body` as the body of a kernel.
    fn kernel(body: &str) -> String {
        format!(".visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n{body}\n}}\n")
    }

    /// Issue 65: an instruction is found by its opcode, guarded or inside inline assembly's braces;
    /// `cp.async` (LDGSTS) is not `cp.async.bulk`; names, comments and words that only begin with the
    /// letters are not instructions.
    #[test]
    fn an_opcode_is_found_in_the_instructions_only() {
        let bulk = "\t@%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2], 64, [%r3];";
        assert!(mentions(&kernel(bulk), &["cp.async.bulk"]));
        assert!(!mentions(
            &kernel("\tcp.async.ca.shared.global [%r1], [%rd2], 8;"),
            &["cp.async.bulk"]
        ));
        let asm = "\t{ .reg .f32 t; tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}]; }";
        assert!(mentions(&kernel(asm), &["suld", "tex"]));
        assert!(!mentions(&kernel("\t// suld.b.1d in a comment\n\tret;"), &["suld"]));
        let named = format!(
            ".global .align 4 .b8 tex[16];\n{}",
            kernel("\tld.global.f32 %f1, [tex];")
        );
        assert!(!mentions(&named, &["tex"]));
        assert!(!mentions(&kernel("\ttexture_rows: ret;"), &["tex"]));
        assert!(!mentions(TILED, &["tex", "suld", "cp.async.bulk"]));
    }

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

    /// Issue 61: a kernel prints where it, or a function it calls, calls the external `vprintf`; the
    /// name in a comment or of the module's own function is no print.
    #[test]
    fn printf_is_a_call_of_vprintf_followed_through_calls() {
        let printing = CALLS.replace("__cudaCDP2LaunchDeviceV2", "vprintf");
        let module = Module::parse(&printing);
        let workers = module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap();
        assert!(module.prints(workers) && !module.launches_kernels(workers));
        let module = Module::parse(&printing.replace("\tvprintf, \n", "\t// vprintf\n\tother, \n"));
        assert!(!module.prints(module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap()));
        let own = printing.replace(
            ".extern .func  (.param .b32 func_retval0) vprintf",
            ".func  (.param .b32 func_retval0) vprintf",
        );
        let module = Module::parse(&format!(
            "{own}\n.func  (.param .b32 func_retval0) vprintf(\n)\n{{\n\tret;\n}}\n"
        ));
        assert!(!module.prints(module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap()));
        assert!(!Module::parse(CALLS).prints(Module::parse(CALLS).entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap()));
    }
    /// Issue 61: inline assembly puts several statements on a line inside braces of its own, and a
    /// scope's `}` on a line alone; neither hides a load, ends the function early or joins two
    /// statements into one word.
    #[test]
    fn inline_assembly_scopes_are_read_statement_by_statement() {
        let asm = "\t{ .reg .f64 t; ld.f64 t, [%rd1]; add.f64 %fd1, %fd1, t; }\n\t{\n\t.reg .b32 o;\n\tatom.or.b32 o, [%rd2], 0;\n\t}\n\tld.v2.f64 {%fd1, %fd2}, [%rd3];\n";
        let code = TILED.replace(
            "\tbar.sync \t0;\n\tld.shared",
            &format!("{asm}\tbar.sync \t0;\n\tld.shared"),
        );
        let module = Module::parse(&code);
        let tiled = module.entry("tiled").unwrap();
        assert_eq!(module.generic_loads(tiled), 3, "{:?}", tiled.body);
        assert_eq!(
            module.barriers(tiled),
            Barriers::InLoop,
            "the loop closes after the asm scopes"
        );
        assert!(
            tiled.body.contains(&"ret".to_string()),
            "the body runs to the function's own }}"
        );
    }

    #[test]
    fn block_comments_and_labels_on_a_statements_line_are_read_as_ptx_does() {
        let module =
            Module::parse(&CALLS.replace("\tspawn, \n", "\t/* spawn,\n __cudaCDP2LaunchDeviceV2 */ other, \n"));
        let workers = module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap();
        assert!(!module.launches_kernels(workers), "a launch in a block comment is none");
        let named = CALLS.replace("\tspawn, \n", "\tother, \n").replace(
            "$L__BB3_1:\n",
            "$L__BB3_1:\n\tmov.u64 %rd1, __cudaCDP2LaunchDeviceV2;\n",
        );
        assert!(named.contains("mov.u64 %rd1, __cudaCDP2"));
        let module = Module::parse(&named);
        let workers = module.entry("_Z7workersI4SineEvdddddiiP5Tally").unwrap();
        assert!(
            !module.launches_kernels(workers),
            "a name that is not called launches nothing"
        );
        let same_line = TILED.replace("$L__BB0_2:\n\tst.shared", "$L__BB0_2: st.shared");
        let module = Module::parse(&same_line);
        assert_eq!(module.barriers(module.entry("tiled").unwrap()), Barriers::InLoop);
        let quoted = format!(".file 1 \"/home/ann/*odd*/mmm.cu\"\n{TILED}");
        let module = Module::parse(&quoted);
        assert_eq!(
            module.barriers(module.entry("tiled").unwrap()),
            Barriers::InLoop,
            "/* in a quoted path opens no comment"
        );
    }
}
