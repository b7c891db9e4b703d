//! The weekly assignments' templates, made from our own kernels so they never drift from them. In a
//! source of `cuda/`, the students' part sits between two marker lines, its hint first:
//!
//! ```text
//!     // BEGIN ASSIGNMENT
//!     // TODO: what to write, in a line or more
//!     ...our solution...
//!     // END ASSIGNMENT
//! ```
//!
//! nvcc sees comments and our solution; [`template`] keeps the `TODO` lines and drops the rest of the
//! block. A `// STARTER: code` line among the hints becomes `code` in the template: something that
//! compiles but is not yet the answer (a `__device__` where `__constant__` belongs), for blocks the rest
//! of the file needs in order to compile.
//!
//! The deliberately broken submissions in `assignments/<week>/broken/` are made the same way: our
//! solution with one [`Mistake`] put in, so they follow every change to our kernels; so are the red
//! team's kernels (`adversarial/`) and, where the student's part is small, the honest corpus
//! (`honest/`: our part written another correct way, a [`Rewrite`]). `cargo run -p grading --bin
//! templates` writes every week's template into `assignments/`; a test checks that the committed ones
//! are what it makes.

use grader::weeks;

use crate::honest;

pub const BEGIN: &str = "// BEGIN ASSIGNMENT";
pub const END: &str = "// END ASSIGNMENT";
pub const HINT: &str = "// TODO";
pub const STARTER: &str = "// STARTER: ";

/// A week's files: the week (the grader's list of weeks, `grader::weeks`, says its folder in
/// `assignments/` and our solution its template comes from), the image of ours the lab runs (a test compiles every made file like it), the
/// broken submissions its check must catch, the red team's kernels made from our solution
/// (`adversarial/`; a week's hand-written ones sit beside them), and the honest rewrites every rule
/// must pass (`honest/`; weeks 1 to 3, whose students write whole kernels, have hand-written ones).
#[derive(Debug, Clone, Copy)]
pub struct Week {
    pub week: &'static weeks::Week,
    /// The image of ours a kernel week's files are compiled like; `None` for a program week.
    #[cfg(test)]
    pub like: Option<&'static kernels::KernelImage>,
    pub broken: &'static [Mistake],
    pub adversarial: &'static [Adversary],
    pub honest: &'static [Rewrite],
}

impl Week {
    /// The week's folder in `assignments/`.
    pub fn folder(&self) -> &'static str {
        self.week.folder
    }

    /// The folder of our solution, from the repository's root: `kernels/cuda` for a kernel week (the
    /// kernels the labs run), `reference/weeks` for a program week (our programs, which no lab embeds).
    pub fn root(&self) -> &'static str {
        self.week.solution().0
    }

    /// Our solution's file name: the template's, and its broken and red-team files' source.
    pub fn source(&self) -> &'static str {
        self.week.solution().1
    }
}

/// A kernel written to fool the check (issue 39): our solution with `mistake` put in, and the verdict
/// `--check` must give it (`expect`: `PASS`, `FAIL <row>` or `compile error: <words>`) and why.
#[derive(Debug, Clone, Copy)]
pub struct Adversary {
    pub mistake: Mistake,
    pub expect: &'static str,
    pub why: &'static str,
}

/// One mistake a student makes: `correct` (text that occurs exactly once in our solution) becomes
/// `wrong` in `broken/<name>.cu`, whose header says `what` goes wrong.
#[derive(Debug, Clone, Copy)]
pub struct Mistake {
    pub name: &'static str,
    pub what: &'static str,
    pub correct: &'static str,
    pub wrong: &'static str,
    /// Changes elsewhere that go with it, each (correct, wrong) and each once: a program that
    /// allocates with `malloc` must free with `free`, or it fails for another reason than the week's.
    pub also: &'static [(&'static str, &'static str)],
}

/// An honest submission (issue 61's corpus): our part written another correct way, which the check
/// must pass like ours. The same edit as a [`Mistake`], with `what` saying how it differs.
pub type Rewrite = Mistake;

pub const fn mistake(name: &'static str, what: &'static str, correct: &'static str, wrong: &'static str) -> Mistake {
    Mistake {
        name,
        what,
        correct,
        wrong,
        also: &[],
    }
}

impl Mistake {
    /// `solution` with this mistake put in; an error where a text to change is not there exactly once.
    fn put_into(&self, solution: &str, source: &str) -> Result<String, String> {
        let mut text = solution.to_string();
        for (correct, wrong) in std::iter::once((self.correct, self.wrong)).chain(self.also.iter().copied()) {
            let found = text.matches(correct).count();
            if found != 1 {
                return Err(format!(
                    "{source}: the mistake {} changes text found {found} times in the solution, not once",
                    self.name
                ));
            }
            text = text.replacen(correct, wrong, 1);
        }
        Ok(text)
    }
}

/// What week 5's and week 6's programs allocate, wait with and free, as in our solutions in
/// reference/weeks/: what their broken programs and their honest rewrites (honest.rs) change.
pub const PIPELINE_ALLOC: &str = "    CHECK_CUDA(cudaHostAlloc((void**)&PtCPU, bytes, cudaHostAllocDefault));\n    CHECK_CUDA(cudaHostAlloc((void**)&PtResCPU, bytes, cudaHostAllocDefault));\n";
pub const PIPELINE_FREE: &str = "    CHECK_CUDA(cudaFreeHost(PtCPU));\n    CHECK_CUDA(cudaFreeHost(PtResCPU));\n";
pub const MMM_WAIT: &str = "    for (int i = 0; i < COUNT; ++i) CHECK_CUDA(cudaStreamSynchronize(stream[i]));\n";
pub const MMM_PINNED_ALLOC: &str =
    "    CHECK_CUDA(cudaMallocHost((void**)&in, 2 * COUNT * bytes));\n    CHECK_CUDA(cudaMallocHost((void**)&out, COUNT * bytes));\n";
pub const MMM_PINNED_FREE: &str = "    CHECK_CUDA(cudaFreeHost(in));\n    CHECK_CUDA(cudaFreeHost(out));\n";

/// The child launch of `workers` in adaptive_simpson.cu, which every week-7 mistake changes.
const CHILD_LAUNCH: &str = "    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0,\n                                                      depth + 1, max_depth, tally);";

/// The loop over the tiles of the tiled `mmm` in mmm.cu, which the week-3 rule mistake replaces.
const TILE_LOOP: &str = "    for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
        // Outside A or B a tile is padded with zeros, which add nothing to the sum.
        as[ty][tx] = (row < a.rows && tile + tx < a.cols) ? a(row, tile + tx) : T(0);
        bs[ty][tx] = (tile + ty < b.rows && col < b.cols) ? b(tile + ty, col) : T(0);
        __syncthreads();  // the tiles are complete before anyone reads them
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            sum += as[ty][k] * bs[k][tx];
        }
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }";

/// The child launch of `workers` in adaptive_simpson.cu with its failure branch, which the week-7
/// rule mistake replaces.
pub const CHILD_LAUNCH_AND_CHECK: &str =
    "    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0,
                                                      depth + 1, max_depth, tally);
    if (cudaGetLastError() != cudaSuccess) {
        // Typically the pending-launch limit: keep this interval's estimate and report the failure.
        atomicAdd(&tally->launch_failures, 1ULL);
        atomicAdd(&tally->integral, left + right);
        atomicAdd(&tally->accepted, 1ULL);
    }";

/// The end of the tiled `mmm` in mmm.cu, which the week-3 mistakes about memory and output change.
const TILED_WRITE: &str = "    if (row < c.rows && col < c.cols) {\n        c(row, col) = sum;\n    }";

/// The same with `extra` after it, for a mistake that does more than the product.
macro_rules! after_tiled_write {
    ($extra:literal) => {
        concat!(
            "    if (row < c.rows && col < c.cols) {\n        c(row, col) = sum;\n    }\n",
            $extra
        )
    };
}

/// [`LOOP_INSTEAD_OF_LAUNCH`] as a literal, for `concat!`. With arguments: the loop's comment, and a
/// statement each split runs: the thread's own split's before the loop, each later one after its
/// decision (indented for the loop).
macro_rules! loop_instead_of_launch {
    () => {
        loop_instead_of_launch!(
            "    // BUG: no child grid: this thread refines its interval itself, depth first, with a stack of its own.\n",
            "",
            ""
        )
    };
    ($comment:literal, $first_split:literal, $each_split:literal) => {
        concat!(
            $comment,
            $first_split,
            "    Interval stack[64];
    int top = 0;
    const double half = mine.a + (mine.b - mine.a) / 2.0;
    stack[top++] = Interval{half, mine.b, right, mine.tolerance / 2.0, depth + 1};
    stack[top++] = Interval{mine.a, half, left, mine.tolerance / 2.0, depth + 1};
    while (top > 0) {
        const Interval in = stack[--top];
        double l, r;
        if (decide(F(), in, max_depth, tally, &l, &r)) continue;
",
            $each_split,
            "        const double m = in.a + (in.b - in.a) / 2.0;
        stack[top++] = Interval{m, in.b, r, in.tolerance / 2.0, in.depth + 1};
        stack[top++] = Interval{in.a, m, l, in.tolerance / 2.0, in.depth + 1};
    }"
        )
    };
}

/// Workers that refine their interval in a loop of their own, depth first, instead of launching a
/// child grid: the week-7 rule mistake, and the base of the red team's kernels.
const LOOP_INSTEAD_OF_LAUNCH: &str = loop_instead_of_launch!();

/// The red team's week-4 kernels made from our solution (issue 61): each must get its `expect`.
const WEEK_4_ADVERSARIAL: [Adversary; 2] = [Adversary {
    mistake: mistake(
        "generic-constant-pointer",
        "the spheres stay in __constant__ (the ptxas rule holds), but the pointer to them goes through an empty inline assembly statement, so the compiler no longer knows it points into constant memory and reads every sphere through generic loads, not the constant cache.",
        "    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage), count, image, view);",
        "    const Sphere* spheres = reinterpret_cast<const Sphere*>(sphere_storage);\n    asm volatile(\"\" : \"+l\"(spheres));  // the compiler no longer knows where this points\n    trace<0>(spheres, count, image, view);",
    ),
    expect: "FAIL constant memory, measured: loads per pixel not from the constant cache (ncu)",
    why: "generic loads do not go through the constant cache; the counters count them beside global loads (issue 61).",
}, Adversary {
    mistake: mistake(
        "spheres-in-shared",
        "the spheres stay in __constant__ (the ptxas rule holds) and no global or generic load is made, but each block first copies them into shared memory and every pixel reads them from there, not from the constant cache.",
        "    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage), count, image, view);",
        "    __shared__ Sphere copied[1024];\n    const Sphere* spheres = reinterpret_cast<const Sphere*>(sphere_storage);\n    if (count <= 1024) {\n        for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < count; i += blockDim.x * blockDim.y) copied[i] = spheres[i];\n        __syncthreads();\n        trace<0>(copied, count, image, view);\n    } else {\n        trace<0>(spheres, count, image, view);\n    }",
    ),
    expect: "FAIL constant memory, measured: loads per pixel not from the constant cache (ncu)",
    why: "shared-memory loads are counted beside global and generic ones (issue 61): one per sphere and pixel, where ours makes none.",
}];

/// The red team's week-7 kernels made from our solution (issue 39): each must get its `expect`.
const WEEK_7_ADVERSARIAL: [Adversary; 5] = [
    Adversary {
        mistake: mistake(
            "launch-in-a-block-comment",
            "workers that refine in a loop of their own, with an inline-assembly block comment that spells out a call of the device runtime's launch function, to pass the rule read from the PTX.",
            CHILD_LAUNCH_AND_CHECK,
            concat!("    asm volatile(\"/* call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1); */\");  // a launch in a comment\n", loop_instead_of_launch!()),
        ),
        expect: "FAIL child grids: every workers<F> launches its children itself (PTX)",
        why: "the PTX is read statement by statement, as ptxas reads it: /* */ comments are no code (issue 61).",
    },
    Adversary {
        mistake: mistake(
            "launch-in-a-comment",
            "workers that refine in a loop of their own, with an inline-assembly comment that names the device runtime's launch call, to pass the rule read from the PTX.",
            CHILD_LAUNCH_AND_CHECK,
            concat!("    asm volatile(\"// __cudaCDP2LaunchDeviceV2\");  // a comment that names the launch call\n", loop_instead_of_launch!()),
        ),
        expect: "FAIL child grids: every workers<F> launches its children itself (PTX)",
        why: "comments in the PTX are no code; the rule reads instructions only.",
    },
    Adversary {
        mistake: mistake(
            "launch-never-runs",
            "workers that refine in a loop of their own, and a real child launch in a branch that never runs, so the PTX holds a launch.",
            CHILD_LAUNCH_AND_CHECK,
            concat!(
                "    if (depth < 0) {  // never true: a launch the PTX shows and the GPU never makes\n",
                "        workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0, depth + 1, max_depth, tally);\n",
                "    }\n",
                loop_instead_of_launch!()
            ),
        ),
        expect: "FAIL child grids, measured: thread blocks launched on the device (ncu)",
        why: "the counters see only the master's block launched, where ours launches a grid per split.",
    },
    Adversary {
        mistake: Mistake {
            also: &[(
                "template <typename F>\n__global__ void workers(",
                "// A grid that does nothing: launched once per split, for the counters.\n__global__ void nothing() {}\n\ntemplate <typename F>\n__global__ void workers(",
            )],
            ..mistake(
                "empty-children",
                "workers that launch one empty child grid per split, so that as many thread blocks are launched on the device as a tree of child grids launches, while the refinement itself is done in a loop of the parent's own, depth first (issue 61).",
                CHILD_LAUNCH_AND_CHECK,
                loop_instead_of_launch!(
                    "    // This thread refines its interval itself, depth first, with a stack of its own, and launches an\n    // empty grid of one block per split, as many blocks as a tree of child grids would launch.\n",
                    "    nothing<<<1, 2, 0, cudaStreamFireAndForget>>>();\n",
                    "        nothing<<<1, 2, 0, cudaStreamFireAndForget>>>();\n"
                ),
            )
        },
        expect: "FAIL 1/((x-0.3)^2+1e-4) on [0, 1], tolerance 1e-10, depth limit 20",
        why: "integrands.cuh counts each grid's evaluations of the integrand: the loop's grid makes nearly all of them, where a tree of child grids makes 12 in each worker grid (issue 61).",
    },
    Adversary {
        mistake: mistake(
            "counts-one-twice",
            "a correct tree of child grids that counts one accepted interval twice (the first half at depth 1 where it starts at 0), hoping a count is compared with the integral's tolerance.",
            "        atomicAdd(&tally->accepted, 1ULL);\n        if (!converged)",
            "        atomicAdd(&tally->accepted, (in.depth == 1 && in.a == 0.0) ? 2ULL : 1ULL);  // one interval counted twice\n        if (!converged)",
        ),
        expect: "FAIL 1/((x-0.3)^2+1e-4) on [0, 1], tolerance 1e-6, depth limit 1",
        why: "the counts (intervals accepted and split, the deepest level) must equal the CPU's exactly.",
    },
];

/// The kernel weeks, in course order.
pub const WEEKS: [Week; 9] = [
    Week {
        week: &weeks::WEEKS[0],
        #[cfg(test)]
        like: Some(&kernels::SIMPSON),
        adversarial: &[],
        honest: &[],
        broken: &[
            mistake(
                "missing-block-offset",
                "every block writes the first blockDim.x sums; the rest are never written.",
                "const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
                "const long long i = threadIdx.x;  // BUG: forgets the block's offset",
            ),
            mistake(
                "off-by-one",
                "each thread integrates the sub-interval after its own.",
                "const double x = a + i * h;",
                "const double x = a + (i + 1) * h;  // BUG: starts one sub-interval late",
            ),
        ],
    },
    Week {
        week: &weeks::WEEKS[1],
        #[cfg(test)]
        like: Some(&kernels::MMM_BS16),
        adversarial: &[],
        honest: &[],
        broken: &[
            mistake("swapped-indices", "B is read as if transposed.", "sum += a(row, k) * b(k, col);", "sum += a(row, k) * b(col, k);  // BUG: B's indices swapped"),
            mistake(
                "missing-bounds-check",
                "threads outside C write past its rows and end.",
                "    if (row < c.rows && col < c.cols) {\n        T sum = 0;",
                "    {  // BUG: no check that (row, col) lies inside C\n        T sum = 0;",
            ),
        ],
    },
    Week {
        week: &weeks::WEEKS[2],
        #[cfg(test)]
        like: Some(&kernels::MMM_BS16),
        adversarial: &[],
        honest: &[],
        broken: &[
            mistake(
                "missing-syncthreads",
                "the first __syncthreads() is gone.",
                "        __syncthreads();  // the tiles are complete before anyone reads them",
                "        // BUG: no __syncthreads() here: threads read tiles other warps have not written yet",
            ),
            mistake(
                "off-by-one-bound",
                "the tile loop stops one tile early when k is no multiple of BLOCK_SIZE (the last, partial tile is never added).",
                "    for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {",
                "    for (int tile = 0; tile + BLOCK_SIZE <= a.cols; tile += BLOCK_SIZE) {  // BUG: skips the last, partial tile",
            ),
            mistake(
                "swapped-tile-indices",
                "the shared tile of B is indexed the wrong way round.",
                "sum += as[ty][k] * bs[k][tx];",
                "sum += as[ty][k] * bs[tx][k];  // BUG: the tile of B read across instead of down",
            ),
            mistake(
                "missing-second-syncthreads",
                "the second __syncthreads() is gone: fast warps load the next tiles while slow ones still read these. Whether the values come out wrong depends on timing; racecheck (--sanitize) reports the hazard every time.",
                "        __syncthreads();  // everyone is done with the tiles before they are overwritten",
                "        // BUG: no second __syncthreads(): the next tiles overwrite these while others still read them",
            ),
            mistake(
                "fake-result-row",
                "computes nothing, and one thread prints a line that looks like a passing result row of --check.",
                TILED_WRITE,
                "    if (row == 0 && col == 0) {  // BUG: no product; a forged result row instead\n        printf(\"CHECK-ROW\\tmmm f64, 1 x 1 times 1 x 1\\t0\\t1\\t\\t\\t\\t\\t0.001\\t0.001\\t\\n\");\n    }",
            ),
            mistake(
                "printf-every-block",
                "a correct product, and one thread of every block prints what it wrote, as students debug: it must pass.",
                TILED_WRITE,
                "    if (row < c.rows && col < c.cols) {\n        c(row, col) = sum;\n        if (tx == 0 && ty == 0) printf(\"block (%u, %u): c(%d, %d) = %g\\n\", blockIdx.x, blockIdx.y, row, col, (double)sum);  // debugging output, not a bug\n    }",
            ),
            mistake(
                "printf-every-thread",
                "a correct product, and every thread prints what it wrote (megabytes of output): it must pass.",
                TILED_WRITE,
                "    if (row < c.rows && col < c.cols) {\n        c(row, col) = sum;\n        printf(\"block (%d, %d) thread (%d, %d): c(%d, %d) = %g\\n\", blockIdx.x, blockIdx.y, tx, ty, row, col, (double)sum);  // debugging output, not a bug\n    }",
            ),
            mistake(
                "writes-past-c",
                "a correct product plus one store 40 elements past the end of C.",
                TILED_WRITE,
                after_tiled_write!("    if (row == 0 && col == 0) {\n        c.data[(size_t)c.rows * c.cols + 40] = sum;  // BUG: past the end of C\n    }"),
            ),
            mistake(
                "writes-into-a",
                "one thread overwrites A(3, 7), an input the kernel must only read, after its product.",
                TILED_WRITE,
                after_tiled_write!("    if (row == 3 && col == 0 && a.rows > 3 && a.cols > 7) {\n        a(3, 7) = 0;  // BUG: writes into the input A\n    }"),
            ),
            mistake(
                "writes-nan",
                "C(0, 0) is written, as NaN (0 / 0): the check must show the NaN, not call it never written.",
                TILED_WRITE,
                "    if (row < c.rows && col < c.cols) {\n        c(row, col) = (row == 0 && col == 0) ? sum * T(0) / T(0) : sum;  // BUG: NaN in C(0, 0)\n    }",
            ),
            mistake(
                "naive-body-in-tiled",
                "the tiled kernel multiplies straight from global memory, as mmm-ab does: right values, a little slower, but no tiles and no barrier, so the week's rules fail.",
                TILE_LOOP,
                "    for (int k = 0; k < a.cols; ++k) {  // BUG: the naive body, no shared tiles\n        if (row < a.rows && col < b.cols) sum += a(row, k) * b(k, col);\n    }",
            ),
            mistake(
                "traps",
                "thread (0, 0) of block (0, 0) executes __trap() before writing: every case dies, and the others still run.",
                TILED_WRITE,
                "    if (row == 0 && col == 0) {\n        __trap();  // BUG: aborts the kernel\n    }\n    if (row < c.rows && col < c.cols) {\n        c(row, col) = sum;\n    }",
            ),
        ],
    },
    Week {
        week: &weeks::WEEKS[3],
        #[cfg(test)]
        like: Some(&kernels::TRACER),
        adversarial: &WEEK_4_ADVERSARIAL,
        honest: &honest::WEEK_4,
        broken: &[
            mistake(
                "global-memory",
                "the spheres live in global memory; the images are right, the lesson is missed.",
                "__constant__ __align__(16) char sphere_storage[sizeof(Sphere) * MAX_SPHERES];",
                "__device__ __align__(16) char sphere_storage[sizeof(Sphere) * MAX_SPHERES];  // BUG: global memory, not __constant__",
            ),
            mistake(
                "last-sphere-missing",
                "trace_constant hands trace one sphere too few.",
                "    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage), count, image, view);",
                "    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage), count - 1, image, view);  // BUG: off by one",
            ),
        ],
    },
    Week {
        week: &weeks::WEEKS[4],
        #[cfg(test)]
        like: None,
        adversarial: &[],
        honest: &honest::PIPELINE,
        broken: &[
            Mistake {
                name: "pageable-memory",
                what: "the host buffers come from malloc: pageable memory, from which no copy can run asynchronously, so nothing overlaps.",
                correct: PIPELINE_ALLOC,
                wrong: "    PtCPU = (float*)malloc(bytes);  // BUG: pageable memory: no copy from or to it can overlap a kernel\n    PtResCPU = (float*)malloc(bytes);\n",
                also: &[(
                    PIPELINE_FREE,
                    "    free(PtCPU);\n    free(PtResCPU);\n",
                )],
            },
            mistake(
                "one-stream",
                "NST is ignored: the whole job is one chunk on one stream, so nothing can overlap.",
                "    const int Nst = (int)arg_int(argc, argv, 2, \"NST\");\n",
                "    const int Nst = 1;  // BUG: NST is ignored: one chunk on one stream, so nothing can overlap\n",
            ),
            Mistake {
                name: "synchronous-copies",
                what: "cudaMemcpy instead of cudaMemcpyAsync: every copy waits on the NULL stream, which waits for every other stream, so the kernels run alone.",
                correct: "        CHECK_CUDA(cudaMemcpyAsync(PtGPU + first, PtCPU + first, size * sizeof(float),\n                                   cudaMemcpyHostToDevice, Stream[i]));\n",
                wrong: "        CHECK_CUDA(cudaMemcpy(PtGPU + first, PtCPU + first, size * sizeof(float),\n                              cudaMemcpyHostToDevice));  // BUG: synchronous, on the NULL stream: no overlap\n",
                also: &[(
                    "        CHECK_CUDA(cudaMemcpyAsync(PtResCPU + first, PtResGPU + first, size * sizeof(float),\n                                   cudaMemcpyDeviceToHost, Stream[i]));\n",
                    "        CHECK_CUDA(cudaMemcpy(PtResCPU + first, PtResGPU + first, size * sizeof(float),\n                              cudaMemcpyDeviceToHost));  // BUG: synchronous as well\n",
                )],
            },
            mistake(
                "no-wait",
                "no cudaStreamSynchronize: the results are written while the copies back may still be running (and may even come out right).",
                "    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamSynchronize(Stream[i]));\n",
                "    // BUG: no wait: PtResCPU goes to OUTPUT while the copies back may still be running\n",
            ),
            mistake(
                "prints-a-verdict",
                "writes no output file and prints a line that looks like a passing check instead.",
                "    write_floats(argv[5], PtResCPU, N);\n",
                "    std::printf(\"| results | all right | PASS |\\n\");  // BUG: a printed verdict instead of the results\n",
            ),
        ],
    },
    Week {
        week: &weeks::WEEKS[5],
        #[cfg(test)]
        like: None,
        adversarial: &[],
        honest: &honest::MMM_STREAMED,
        broken: &[
            mistake(
                "mmm-one-stream",
                "every product's copies and kernel go to stream[0]: COUNT streams are made, one carries all the work.",
                MMM_STREAMED_ISSUE,
                "        CHECK_CUDA(cudaMemcpyAsync(A, in + 2 * i * elements, bytes, cudaMemcpyHostToDevice, stream[0]));  // BUG: stream[0], not stream[i]\n        CHECK_CUDA(cudaMemcpyAsync(B, in + (2 * i + 1) * elements, bytes, cudaMemcpyHostToDevice, stream[0]));\n        mmm<<<grid, block, 0, stream[0]>>>(A, B, C, N);\n        CHECK_LAUNCH();\n        CHECK_CUDA(cudaMemcpyAsync(out + i * elements, C, bytes, cudaMemcpyDeviceToHost, stream[0]));\n",
            ),
        ],
    },
    Week {
        week: &weeks::WEEKS[6],
        #[cfg(test)]
        like: None,
        adversarial: &[],
        honest: &honest::ZERO_COPY,
        broken: &[mistake(
            "copies-anyway",
            "A and B are copied to device memory and C back: the traffic zero-copy is there to avoid.",
            "    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);\n",
            "    // BUG: A and B are copied to device memory and C back: the traffic zero-copy is there to avoid\n    float *gpu_A, *gpu_C;\n    CHECK_CUDA(cudaMalloc((void**)&gpu_A, 2 * bytes));\n    CHECK_CUDA(cudaMalloc((void**)&gpu_C, bytes));\n    CHECK_CUDA(cudaMemcpy(gpu_A, A, 2 * bytes, cudaMemcpyHostToDevice));\n    vectorAdd<<<blocks, BSX>>>(gpu_A, gpu_A + N, gpu_C, N);\n    CHECK_CUDA(cudaMemcpy(C, gpu_C, bytes, cudaMemcpyDeviceToHost));\n    CHECK_CUDA(cudaFree(gpu_A));\n    CHECK_CUDA(cudaFree(gpu_C));\n",
        )],
    },
    Week {
        week: &weeks::WEEKS[7],
        #[cfg(test)]
        like: None,
        adversarial: &[],
        honest: &honest::MMM_STREAMED_AND_PINNED,
        // No mmm-no-wait in week 5: from pageable memory each copy back returns only once it is done,
        // so a program that does not wait still reads finished results there.
        broken: &[
            mistake(
                "mmm-no-wait",
                "no wait for the streams: the products are written while the copies back into pinned memory may still be running.",
                MMM_WAIT,
                "    // BUG: no wait: `out` goes to OUTPUT while the copies back may still be running\n",
            ),
            Mistake {
            name: "mmm-pageable-memory",
            what: "the host buffers come from malloc, as in week 5: pageable memory, from which no copy runs beside a kernel.",
            correct: MMM_PINNED_ALLOC,
            wrong: "    in = (double*)malloc(2 * COUNT * bytes);  // BUG: pageable memory: no copy from or to it overlaps a kernel\n    out = (double*)malloc(COUNT * bytes);\n",
            also: &[(
                MMM_PINNED_FREE,
                "    free(in);\n    free(out);\n",
            )],
        },
        ],
    },
    Week {
        week: &weeks::WEEKS[8],
        #[cfg(test)]
        like: Some(&kernels::ADAPTIVE_SIMPSON),
        adversarial: &WEEK_7_ADVERSARIAL,
        honest: &honest::WEEK_7,
        broken: &[
            mistake(
                "tolerance-not-halved",
                "children get the parent's tolerance, not half of it: they stop splitting too early.",
                CHILD_LAUNCH,
                "    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance,  // BUG: not halved\n                                                      depth + 1, max_depth, tally);",
            ),
            mistake(
                "depth-not-increased",
                "children start at their parent's depth: the depth limit never comes.",
                CHILD_LAUNCH,
                "    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0,\n                                                      depth, max_depth, tally);  // BUG: depth + 1",
            ),
            mistake(
                "loops-instead-of-launching",
                "each worker refines its interval in a loop of its own, depth first, with no child grid: the same integral, intervals and splits, but not the week's lesson, so the rules fail, and every case where one grid evaluates the integrand more than an eighth of the tree's times.",
                CHILD_LAUNCH_AND_CHECK,
                LOOP_INSTEAD_OF_LAUNCH,
            ),
            mistake(
                "one-thread-per-child",
                "the child grid has one thread, so only the left half of each split interval is ever decided.",
                CHILD_LAUNCH,
                "    workers<F><<<1, 1, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0,  // BUG: one thread, two halves\n                                                      depth + 1, max_depth, tally);",
            ),
        ],
    },
];

/// The loop body of mmm_streamed.cu that queues a product's work on its own stream.
const MMM_STREAMED_ISSUE: &str = "        CHECK_CUDA(cudaMemcpyAsync(A, in + 2 * i * elements, bytes, cudaMemcpyHostToDevice, stream[i]));\n        CHECK_CUDA(cudaMemcpyAsync(B, in + (2 * i + 1) * elements, bytes, cudaMemcpyHostToDevice, stream[i]));\n        mmm<<<grid, block, 0, stream[i]>>>(A, B, C, N);\n        CHECK_LAUNCH();\n        CHECK_CUDA(cudaMemcpyAsync(out + i * elements, C, bytes, cudaMemcpyDeviceToHost, stream[i]));\n";

impl Week {
    /// Every file the week's folder gets from `text`, our source: the template, then `broken/*.cu`,
    /// each as (path inside the folder, contents).
    pub fn files(&self, text: &str) -> Result<Vec<(String, String)>, String> {
        let mut files = vec![(self.source().to_string(), template(self.source(), text)?)];
        let solution = solution(text);
        for mistake in self.broken {
            let header = format!(
                "// A deliberately broken submission (assignments/README.md): {}\n\
                 // Made from {}/{} by `cargo run -p grading --bin templates`; --check must catch it (the GPU tests run it).\n\n",
                mistake.what, self.root(), self.source()
            );
            files.push((
                format!("broken/{}.cu", mistake.name),
                header + &mistake.put_into(&solution, self.source())?,
            ));
        }
        for adversary in self.adversarial {
            let mistake = adversary.mistake;
            let header = format!(
                "// Red team (issue 39): {}\n// expect: {}\n// why: {}\n\
                 // Made from {}/{} by `cargo run -p grading --bin templates` (assignments/README.md).\n\n",
                mistake.what,
                adversary.expect,
                adversary.why,
                self.root(),
                self.source()
            );
            files.push((
                format!("adversarial/{}.cu", mistake.name),
                header + &mistake.put_into(&solution, self.source())?,
            ));
        }
        for rewrite in self.honest {
            let header = format!(
                "// An honest submission (issue 61's corpus): {}\n// expect: PASS\n\
                 // Made from {}/{} by `cargo run -p grading --bin templates` (assignments/README.md).\n\n",
                rewrite.what,
                self.root(),
                self.source()
            );
            files.push((
                format!("honest/{}.cu", rewrite.name),
                header + &rewrite.put_into(&solution, self.source())?,
            ));
        }
        Ok(files)
    }
}

/// Our source as a student would hand it in: without the marker, hint and starter lines.
pub fn solution(text: &str) -> String {
    let marker = |line: &str| {
        let line = line.trim();
        line == BEGIN || line == END || line.starts_with(HINT) || line.starts_with(STARTER)
    };
    text.lines()
        .filter(|line| !marker(line))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The week's template from the text of its source: a header saying what it is, then the
/// source with every assignment block cut down to its hint. Errors name the line of a malformed block.
pub fn template(source: &str, text: &str) -> Result<String, String> {
    // The starter names no file of ours: a student pack has none (scripts/student-pack.sh).
    let mut out = format!(
        "// {source}: the starter of this week's assignment (the week's README.md says what to write).\n\
         // Write the parts marked TODO; the README says how the lab compiles this file and checks it with --check.\n\n"
    );
    let mut block: Option<(usize, bool, bool)> = None; // (line of BEGIN, hint seen, solution seen)
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let marker = line.trim();
        match (&mut block, marker) {
            (None, BEGIN) => block = Some((number, false, false)),
            (None, END) => return Err(format!("{source}:{number}: {END} without {BEGIN}")),
            (None, _) => {
                out.push_str(line);
                out.push('\n');
            }
            (Some((begin, _, _)), BEGIN) => {
                return Err(format!(
                    "{source}:{number}: {BEGIN} inside the block opened at line {begin}"
                ))
            }
            (Some((begin, hint, solution)), END) => {
                if !*hint || !*solution {
                    return Err(format!(
                        "{source}:{begin}: an assignment block needs {HINT} lines first, then the solution"
                    ));
                }
                block = None;
            }
            (Some((begin, hint, solution)), _) if marker.starts_with(HINT) || marker.starts_with(STARTER) => {
                if *solution {
                    return Err(format!(
                        "{source}:{number}: a {HINT} or {STARTER}line after the solution began (block at line {begin})"
                    ));
                }
                *hint |= marker.starts_with(HINT);
                out.push_str(&line.replacen(STARTER, "", 1));
                out.push('\n');
            }
            (Some((_, _, solution)), _) => *solution |= !marker.is_empty(),
        }
    }
    match block {
        Some((begin, _, _)) => Err(format!("{source}:{begin}: {BEGIN} is never closed")),
        None => Ok(out),
    }
}

/// The lines of the solution in `text`: what no template may contain.
pub fn solution_lines(text: &str) -> Vec<&str> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        match line.trim() {
            BEGIN => inside = true,
            END => inside = false,
            marker if inside && !marker.starts_with(HINT) && !marker.starts_with(STARTER) && !marker.is_empty() => {
                lines.push(marker)
            }
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    const SOURCE: &str = "a\n  // BEGIN ASSIGNMENT\n  // TODO: add\n  x = y + z;\n  // END ASSIGNMENT\nb\n";

    fn repository() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn a_template_keeps_the_hint_and_drops_the_solution() {
        let made = template("t.cu", SOURCE).unwrap();
        assert!(made.ends_with("a\n  // TODO: add\nb\n"), "{made}");
        assert!(made.starts_with("// t.cu: the starter of this week's assignment"));
        assert_eq!(solution_lines(SOURCE), ["x = y + z;"]);
        let starter = "  // BEGIN ASSIGNMENT\n  // TODO: constant\n  // STARTER: __device__ int v;\n  __constant__ int v;\n  // END ASSIGNMENT\n";
        assert!(template("t.cu", starter)
            .unwrap()
            .ends_with("  // TODO: constant\n  __device__ int v;\n"));
        assert_eq!(solution_lines(starter), ["__constant__ int v;"]);
    }

    #[test]
    fn malformed_blocks_are_errors_with_their_line() {
        for (text, error) in [
            (
                "// BEGIN ASSIGNMENT\nx;\n",
                "t.cu:1: // BEGIN ASSIGNMENT is never closed",
            ),
            (
                "// END ASSIGNMENT\n",
                "t.cu:1: // END ASSIGNMENT without // BEGIN ASSIGNMENT",
            ),
            (
                "// BEGIN ASSIGNMENT\nx;\n// END ASSIGNMENT\n",
                "t.cu:1: an assignment block needs // TODO lines first, then the solution",
            ),
            (
                "// BEGIN ASSIGNMENT\n// TODO\n// END ASSIGNMENT\n",
                "t.cu:1: an assignment block needs // TODO lines first, then the solution",
            ),
            (
                "// BEGIN ASSIGNMENT\n// TODO a\nx;\n// TODO b\n// END ASSIGNMENT\n",
                "t.cu:4: a // TODO or // STARTER: line after the solution began (block at line 1)",
            ),
            (
                "// BEGIN ASSIGNMENT\n// BEGIN ASSIGNMENT\n",
                "t.cu:2: // BEGIN ASSIGNMENT inside the block opened at line 1",
            ),
        ] {
            assert_eq!(template("t.cu", text).unwrap_err(), error);
        }
    }

    #[test]
    fn the_committed_templates_and_broken_kernels_are_what_the_generator_makes() {
        for week in WEEKS {
            let source = std::fs::read_to_string(repository().join(week.root()).join(week.source())).unwrap();
            let folder = repository().join("assignments").join(week.folder());
            let made = week.files(&source).unwrap();
            for (name, text) in &made {
                let committed = std::fs::read_to_string(folder.join(name)).unwrap_or_default();
                assert!(
                    &committed == text,
                    "{}/{name} is not what the generator makes: run `cargo run -p grading --bin templates`",
                    week.folder()
                );
            }
            // Nothing else in broken/: every broken kernel there is one the generator makes for a week
            // of this folder (weeks 5 and 6 have two programs each).
            let made_here: Vec<String> = WEEKS
                .iter()
                .filter(|other| other.folder() == week.folder())
                .flat_map(|other| {
                    let source = std::fs::read_to_string(repository().join(other.root()).join(other.source())).unwrap();
                    other.files(&source).unwrap().into_iter().map(|(name, _)| name)
                })
                .collect();
            let listed: Vec<String> = std::fs::read_dir(folder.join("broken"))
                .unwrap()
                .map(|entry| format!("broken/{}", entry.unwrap().file_name().to_string_lossy()))
                .collect();
            assert!(
                listed.iter().all(|name| made_here.contains(name)),
                "{}: {listed:?}",
                week.folder()
            );
        }
    }

    #[test]
    fn no_template_holds_a_solution_line() {
        for week in WEEKS {
            let source = std::fs::read_to_string(repository().join(week.root()).join(week.source())).unwrap();
            let made = template(week.source(), &source).unwrap();
            let solution = solution_lines(&source);
            assert!(!solution.is_empty(), "{} marks no assignment", week.source());
            // A solution line may also stand outside the blocks (an atomicAdd the master shares), or be
            // a starter's line too (a CHECK_LAUNCH after the starter's own launch): the template must
            // not have it more often than the rest of the source and the starter lines do.
            let count = |text: &str, line: &str| text.lines().filter(|l| l.trim() == line).count();
            let starter_lines = |line: &str| {
                source
                    .lines()
                    .filter_map(|l| l.trim().strip_prefix(STARTER))
                    .filter(|code| code.trim() == line)
                    .count()
            };
            for line in solution.iter().filter(|line| line.len() > 12) {
                let outside =
                    count(&source, line) - solution.iter().filter(|l| *l == line).count() + starter_lines(line);
                assert!(
                    count(&made, line) <= outside,
                    "{}'s template contains the solution line {line:?}",
                    week.folder()
                );
            }
        }
    }

    #[test]
    fn a_mistake_must_change_text_that_occurs_once() {
        const MISTAKES: [Mistake; 1] = [mistake("m", "w", "x;", "y;")];
        let week = Week {
            week: &weeks::Week {
                name: "t",
                folder: "t",
                lab: "lab-simpson",
                args: &[],
                handed: weeks::Handed::Kernel {
                    ours: "kernels/cuda/t.cu",
                    kernels: &[],
                },
            },
            like: Some(&kernels::SIMPSON),
            broken: &MISTAKES,
            adversarial: &[],
            honest: &[],
        };
        assert_eq!(week.files("x;\n").unwrap()[1].1.lines().last(), Some("y;"));
        assert!(week
            .files("x;\nx;\n")
            .unwrap_err()
            .contains("found 2 times in the solution, not once"));
        assert!(week.files("z;\n").unwrap_err().contains("found 0 times"));
        assert_eq!(solution(SOURCE), "a\n  x = y + z;\nb\n");
    }

    #[test]
    fn every_template_and_every_broken_kernel_compiles() {
        for week in WEEKS {
            let source = std::fs::read_to_string(repository().join(week.root()).join(week.source())).unwrap();
            for (name, _) in week.files(&source).unwrap() {
                let file = repository().join("assignments").join(week.folder()).join(name);
                // For the oldest GPU the labs are built for: the template must build on a student's T4 too.
                let built = match week.like {
                    Some(like) => kernels::runtime::compile(&file, like, kernels::BUILT_ARCHS[0]).map(|_| ()),
                    None => {
                        kernels::runtime::compile_program(&file, &[grading::program::HEADER], kernels::BUILT_ARCHS[0])
                            .map(|_| ())
                    }
                };
                built.unwrap_or_else(|err| match err {
                    kernels::runtime::CompileError::Nvcc { messages, .. } => {
                        panic!("{}:\n{messages}", file.display())
                    }
                    other => panic!("{}: {other}", file.display()),
                });
            }
        }
    }
}
