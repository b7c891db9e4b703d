//! The honest corpora the templates generator makes (issues 61 and 66): our solution with the
//! student's part written another correct way, a [`Rewrite`] each, which every rule of the week must
//! pass like ours. Weeks 1 to 3, whose students write whole kernels, have hand-written corpora instead.

use crate::assignment::{
    mistake, Mistake, Rewrite, CHILD_LAUNCH_AND_CHECK, MMM_PINNED_ALLOC, MMM_PINNED_FREE, MMM_WAIT, PIPELINE_ALLOC,
    PIPELINE_FREE,
};

/// `sphere_storage` in constant memory and `trace_constant`'s one line, as in our tracer.cu: what
/// week 4's honest rewrites change.
const SPHERE_STORAGE: &str = "__constant__ __align__(16) char sphere_storage[sizeof(Sphere) * MAX_SPHERES];";
const TRACE_CONSTANT: &str = "    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage), count, image, view);";

/// Week 4's honest corpus (issues 61 and 66): the pixels must equal the CPU's exactly, so each keeps
/// `trace_global`'s operations and changes only how the spheres are reached, or writes the tracer out.
pub const WEEK_4: [Rewrite; 6] = [
    mistake(
        "c-style-cast",
        "the spheres reached through a C cast of sphere_storage.",
        TRACE_CONSTANT,
        "    trace<0>((const Sphere*)sphere_storage, count, image, view);",
    ),
    mistake(
        "named-pointer",
        "a named pointer to the first sphere, taken from the array's first byte.",
        TRACE_CONSTANT,
        "    const Sphere* const spheres = reinterpret_cast<const Sphere*>(&sphere_storage[0]);\n    trace<0>(spheres, count, image, view);",
    ),
    Mistake {
        name: "helper-function",
        what: "a device function of its own that returns sphere_storage as an array of spheres.",
        correct: SPHERE_STORAGE,
        wrong: r#"__constant__ __align__(16) char sphere_storage[sizeof(Sphere) * MAX_SPHERES];

// The spheres in constant memory, as an array.
__device__ inline const Sphere* constant_spheres() {
    return reinterpret_cast<const Sphere*>(sphere_storage);
}"#,
        also: &[(TRACE_CONSTANT, "    trace<0>(constant_spheres(), count, image, view);")],
    },
    mistake(
        "through-void",
        "the cast made in two steps through a const void pointer.",
        TRACE_CONSTANT,
        "    const void* raw = sphere_storage;\n    trace<0>(static_cast<const Sphere*>(raw), count, image, view);",
    ),
    Mistake {
        name: "alignment-after-the-name",
        what: "the alignment written after the array's name and its size as MAX_SPHERES spheres, the pointer taken from sphere_storage + 0.",
        correct: SPHERE_STORAGE,
        wrong: "__constant__ char sphere_storage[MAX_SPHERES * sizeof(Sphere)] __align__(16);",
        also: &[(
            TRACE_CONSTANT,
            "    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage + 0), count, image, view);",
        )],
    },
    mistake(
        "written-out",
        "the tracer written out inside trace_constant, with the same operations in the same order as trace<0>, each sphere copied into a local first.",
        TRACE_CONSTANT,
        r#"    const Sphere* spheres = reinterpret_cast<const Sphere*>(sphere_storage);
    const int px = blockIdx.x * blockDim.x + threadIdx.x;
    const int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= view.width || py >= view.height) return;

    const float aspect = (float)view.width / (float)view.height;
    const float u = (2.0f * (px + 0.5f) / view.width - 1.0f) * aspect;
    const float v = 1.0f - 2.0f * (py + 0.5f) / view.height;
    const float length = sqrtf(u * u + v * v + view.eye_z * view.eye_z);
    const Ray ray = {0.0f, 0.0f, view.eye_z, u / length, v / length, -view.eye_z / length};

    float nearest = 1e30f;
    int hit_index = -1;
    for (int i = 0; i < count; ++i) {
        const Sphere sphere = spheres[i];
        const float t = hit(sphere, ray);
        if (t > 0.0f && t < nearest) {
            nearest = t;
            hit_index = i;
        }
    }
    unsigned int rgb;
    if (hit_index < 0) {
        rgb = to_byte(0.1f) | to_byte(0.1f) << 8 | to_byte(0.15f + 0.15f * v) << 16;
    } else {
        const Sphere s = spheres[hit_index];
        const float x = ray.ox + nearest * ray.dx, y = ray.oy + nearest * ray.dy, z = ray.oz + nearest * ray.dz;
        const float nx = (x - s.x) / s.radius, ny = (y - s.y) / s.radius, nz = (z - s.z) / s.radius;
        const float diffuse = fmaxf(nx * view.light_x + ny * view.light_y + nz * view.light_z, 0.0f);
        bool shadowed = false;
        if (diffuse > 0.0f) {
            const Ray towards_light = {x + 1e-3f * nx, y + 1e-3f * ny, z + 1e-3f * nz,
                                       view.light_x, view.light_y, view.light_z};
            for (int i = 0; i < count; ++i) {
                const Sphere other = spheres[i];
                shadowed = shadowed || (i != hit_index && hit(other, towards_light) > 0.0f);
            }
        }
        const float light = view.ambient + (1.0f - view.ambient) * (shadowed ? 0.0f : diffuse);
        rgb = to_byte(s.r * light) | to_byte(s.g * light) << 8 | to_byte(s.b * light) << 16;
    }
    image[(size_t)py * view.width + px] = rgb | 0xFF000000u;"#,
    ),
];

/// The line before `workers` in adaptive_simpson.cu, where a rewrite may put a helper of its own.
const BEFORE_WORKERS: &str =
    "// ---- device-driven: worker grids of two threads, one per half of the interval their parent split ----\n";

/// Week 7's honest corpus (issues 61 and 66): the child launch and its failure branch written other
/// correct ways; the counts must still equal the CPU's and the launches be ours.
pub const WEEK_7: [Rewrite; 6] = [
    mistake(
        "dim3-and-names",
        "the launch's shape in dim3 variables, the half tolerance and next depth named, the error kept in a variable and the failure's atomics in another order.",
        CHILD_LAUNCH_AND_CHECK,
        r#"    const dim3 child_grid(1), child_block(2);  // one thread per half
    const double half_tolerance = mine.tolerance * 0.5;
    const int next_depth = mine.depth + 1;
    workers<F><<<child_grid, child_block, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right,
                                                                       half_tolerance, next_depth, max_depth, tally);
    const cudaError_t launched = cudaGetLastError();
    if (launched != cudaSuccess) {
        atomicAdd(&tally->accepted, 1ULL);
        atomicAdd(&tally->integral, left + right);
        atomicAdd(&tally->launch_failures, 1ULL);
    }"#,
    ),
    Mistake {
        name: "helper-function",
        what: "the launch in a device function of its own that the worker calls (never inlined), which sees the error with cudaPeekAtLastError.",
        correct: CHILD_LAUNCH_AND_CHECK,
        wrong: "    launch_halves<F>(mine, left, right, max_depth, tally);",
        also: &[(
            BEFORE_WORKERS,
            r#"// ---- device-driven: worker grids of two threads, one per half of the interval their parent split ----

template <typename F>
__global__ void workers(double a, double b, double whole_left, double whole_right, double tolerance,
                        int depth, int max_depth, Tally* tally);

// Hands the halves of `in` to a child grid of workers; a launch the device runtime refuses keeps the
// interval's estimate and is counted.
template <typename F>
__device__ __noinline__ void launch_halves(const Interval& in, double left, double right, int max_depth, Tally* tally) {
    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(in.a, in.b, left, right, in.tolerance / 2.0, in.depth + 1,
                                                      max_depth, tally);
    if (cudaPeekAtLastError() != cudaSuccess) {
        atomicAdd(&tally->launch_failures, 1ULL);
        atomicAdd(&tally->integral, left + right);
        atomicAdd(&tally->accepted, 1ULL);
    }
}
"#,
        )],
    },
    mistake(
        "tail-launch",
        "the child grid on the tail-launch stream (cudaStreamTailLaunch): it starts once its parent grid has finished, not beside it.",
        CHILD_LAUNCH_AND_CHECK,
        r#"    workers<F><<<1, 2, 0, cudaStreamTailLaunch>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0,
                                                   depth + 1, max_depth, tally);
    if (cudaGetLastError() != cudaSuccess) {
        atomicAdd(&tally->launch_failures, 1ULL);
        atomicAdd(&tally->integral, left + right);
        atomicAdd(&tally->accepted, 1ULL);
    }"#,
    ),
    mistake(
        "early-return",
        "returns as soon as the launch worked; a refused launch adds each half's estimate on its own.",
        CHILD_LAUNCH_AND_CHECK,
        r#"    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, 0.5 * mine.tolerance,
                                                      mine.depth + 1, max_depth, tally);
    if (cudaGetLastError() == cudaSuccess) return;
    // The launch was refused: the halves are accepted as they are.
    atomicAdd(&tally->integral, left);
    atomicAdd(&tally->integral, right);
    atomicAdd(&tally->accepted, 1ULL);
    atomicAdd(&tally->launch_failures, 1ULL);"#,
    ),
    Mistake {
        name: "launch-in-a-branch",
        what: "the launch inside the branch for an interval that is not done, instead of after a return.",
        correct: CHILD_LAUNCH_AND_CHECK,
        wrong: r#"        workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0,
                                                          depth + 1, max_depth, tally);
        if (cudaGetLastError() != cudaSuccess) {
            atomicAdd(&tally->launch_failures, 1ULL);
            atomicAdd(&tally->integral, left + right);
            atomicAdd(&tally->accepted, 1ULL);
        }
    }"#,
        also: &[(
            "    if (decide(F(), mine, max_depth, tally, &left, &right)) return;\n",
            "    if (!decide(F(), mine, max_depth, tally, &left, &right)) {\n",
        )],
    },
    mistake(
        "named-stream",
        "the child grid on a stream of the thread's own (cudaStreamCreateWithFlags with cudaStreamNonBlocking, as device code requires), destroyed once the launch is queued.",
        CHILD_LAUNCH_AND_CHECK,
        r#"    cudaStream_t stream;
    cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (status == cudaSuccess) {
        workers<F><<<1, 2, 0, stream>>>(mine.a, mine.b, left, right, mine.tolerance / 2.0, depth + 1, max_depth,
                                        tally);
        status = cudaGetLastError();
        cudaStreamDestroy(stream);
    }
    if (status != cudaSuccess) {
        atomicAdd(&tally->launch_failures, 1ULL);
        atomicAdd(&tally->integral, left + right);
        atomicAdd(&tally->accepted, 1ULL);
    }"#,
    ),
];

/// What week 5's and week 6's programs create streams with and wait for, as in our solutions in
/// reference/weeks/: what their honest rewrites change (the allocations are assignment.rs's).
const PIPELINE_STREAMS: &str =
    "    std::vector<cudaStream_t> Stream(Nst);\n    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamCreate(&Stream[i]));\n";
const PIPELINE_WAIT: &str = "    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamSynchronize(Stream[i]));\n";
const PIPELINE_DESTROY: &str = "    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamDestroy(Stream[i]));\n";
/// The pipeline's three loops, breadth first: every copy in, every kernel, every copy back.
const PIPELINE_ISSUE: &str = r#"    for (int i = 0; i < Nst; ++i) {  // copies in: while chunk i copies, chunk i - 1 may already compute
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        CHECK_CUDA(cudaMemcpyAsync(PtGPU + first, PtCPU + first, size * sizeof(float),
                                   cudaMemcpyHostToDevice, Stream[i]));
    }
    for (int i = 0; i < Nst; ++i) {  // kernels: each waits only for its own chunk's copy, in its stream
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        kernel<<<(int)((size + BSX - 1) / BSX), BSX, 0, Stream[i]>>>(PtGPU + first, PtResGPU + first, (int)size, steps);
        CHECK_LAUNCH();
    }
    for (int i = 0; i < Nst; ++i) {  // copies back
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        CHECK_CUDA(cudaMemcpyAsync(PtResCPU + first, PtResGPU + first, size * sizeof(float),
                                   cudaMemcpyDeviceToHost, Stream[i]));
    }
"#;
const MMM_CREATE: &str = "        CHECK_CUDA(cudaStreamCreate(&stream[i]));\n";
/// The German programs' join through one event per stream instead of a wait for each stream.
const MMM_WAIT_BY_EVENTS: &str = r#"    std::vector<cudaEvent_t> done(COUNT);
    for (int i = 0; i < COUNT; ++i) {
        CHECK_CUDA(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
        CHECK_CUDA(cudaEventRecord(done[i], stream[i]));
    }
    for (int i = 0; i < COUNT; ++i) {
        CHECK_CUDA(cudaEventSynchronize(done[i]));
        CHECK_CUDA(cudaEventDestroy(done[i]));
    }
"#;
const ZERO_COPY_ALLOC: &str = "    CHECK_CUDA(cudaHostAlloc((void**)&A, 2 * bytes, cudaHostAllocMapped));\n    CHECK_CUDA(cudaHostAlloc((void**)&C, bytes, cudaHostAllocMapped));\n";
const ZERO_COPY_FREE: &str = "    CHECK_CUDA(cudaFreeHost(A));\n    CHECK_CUDA(cudaFreeHost(C));\n";
const ZERO_COPY_LAUNCH: &str = "    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);\n";
const ZERO_COPY_WAIT: &str = "    CHECK_CUDA(cudaDeviceSynchronize());\n";

/// Week 5's pipeline (issues 60, 61 and 66): other pinned allocations, issue orders and waits. The
/// README calls the slides' breadth-first order advice: the check judges what an order buys.
pub const PIPELINE: [Rewrite; 7] = [
    mistake(
        "malloc-host",
        "the buffers from cudaMallocHost, the slides' call, instead of cudaHostAlloc.",
        PIPELINE_ALLOC,
        "    CHECK_CUDA(cudaMallocHost((void**)&PtCPU, bytes));\n    CHECK_CUDA(cudaMallocHost((void**)&PtResCPU, bytes));\n",
    ),
    Mistake {
        name: "host-register",
        what: "the buffers from malloc, then pinned where they are with cudaHostRegister (and unregistered before free).",
        correct: PIPELINE_ALLOC,
        wrong: r#"    PtCPU = (float*)malloc(bytes);
    PtResCPU = (float*)malloc(bytes);
    if (PtCPU == nullptr || PtResCPU == nullptr) {
        std::fprintf(stderr, "out of host memory for %d floats\n", N);
        return 1;
    }
    CHECK_CUDA(cudaHostRegister(PtCPU, bytes, cudaHostRegisterDefault));
    CHECK_CUDA(cudaHostRegister(PtResCPU, bytes, cudaHostRegisterDefault));
"#,
        also: &[(
            PIPELINE_FREE,
            "    CHECK_CUDA(cudaHostUnregister(PtCPU));\n    CHECK_CUDA(cudaHostUnregister(PtResCPU));\n    free(PtCPU);\n    free(PtResCPU);\n",
        )],
    },
    mistake(
        "depth-first",
        "each chunk's copy in, kernel and copy back issued together, chunk after chunk (depth first), not the slides' breadth-first order.",
        PIPELINE_ISSUE,
        r#"    for (int i = 0; i < Nst; ++i) {  // chunk i whole, on its own stream
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        CHECK_CUDA(cudaMemcpyAsync(PtGPU + first, PtCPU + first, size * sizeof(float), cudaMemcpyHostToDevice,
                                   Stream[i]));
        kernel<<<(int)((size + BSX - 1) / BSX), BSX, 0, Stream[i]>>>(PtGPU + first, PtResGPU + first, (int)size,
                                                                    steps);
        CHECK_LAUNCH();
        CHECK_CUDA(cudaMemcpyAsync(PtResCPU + first, PtResGPU + first, size * sizeof(float), cudaMemcpyDeviceToHost,
                                   Stream[i]));
    }
"#,
    ),
    mistake(
        "events",
        "the wait through an event recorded on each stream after its copy back.",
        PIPELINE_WAIT,
        r#"    std::vector<cudaEvent_t> done(Nst);
    for (int i = 0; i < Nst; ++i) {
        CHECK_CUDA(cudaEventCreate(&done[i]));
        CHECK_CUDA(cudaEventRecord(done[i], Stream[i]));
    }
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaEventSynchronize(done[i]));
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaEventDestroy(done[i]));
"#,
    ),
    mistake(
        "device-synchronize",
        "one cudaDeviceSynchronize for every stream at once.",
        PIPELINE_WAIT,
        "    CHECK_CUDA(cudaDeviceSynchronize());  // every stream's work is done\n",
    ),
    mistake(
        "query-loop",
        "the wait by polling: cudaStreamQuery on each stream until it no longer answers cudaErrorNotReady.",
        PIPELINE_WAIT,
        r#"    for (int i = 0; i < Nst; ++i) {  // asks until stream i's work is done
        cudaError_t state;
        while ((state = cudaStreamQuery(Stream[i])) == cudaErrorNotReady) {
        }
        CHECK_CUDA(state);
    }
"#,
    ),
    Mistake {
        name: "non-blocking-array",
        what: "the streams in an array from new[], created non-blocking (they never wait for the NULL stream).",
        correct: PIPELINE_STREAMS,
        wrong: "    cudaStream_t* Stream = new cudaStream_t[Nst];\n    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamCreateWithFlags(&Stream[i], cudaStreamNonBlocking));\n",
        also: &[(
            PIPELINE_DESTROY,
            "    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamDestroy(Stream[i]));\n    delete[] Stream;\n",
        )],
    },
];

/// Week 5's German program: the streams created first, the join by events or one synchronize,
/// streams that never wait for the NULL stream.
pub const MMM_STREAMED: [Rewrite; 4] = [
    mistake(
        "mmm-streams-first",
        "every stream created before the first product is queued.",
        "    std::vector<cudaStream_t> stream(COUNT);\n    for (int i = 0; i < COUNT; ++i) {\n        CHECK_CUDA(cudaStreamCreate(&stream[i]));\n",
        "    std::vector<cudaStream_t> stream(COUNT);\n    for (int i = 0; i < COUNT; ++i) CHECK_CUDA(cudaStreamCreate(&stream[i]));\n    for (int i = 0; i < COUNT; ++i) {\n",
    ),
    mistake("mmm-events", "the join through an event per stream.", MMM_WAIT, MMM_WAIT_BY_EVENTS),
    mistake(
        "mmm-device-synchronize",
        "the join as one cudaDeviceSynchronize.",
        MMM_WAIT,
        "    CHECK_CUDA(cudaDeviceSynchronize());\n",
    ),
    mistake(
        "mmm-non-blocking",
        "streams created non-blocking.",
        MMM_CREATE,
        "        CHECK_CUDA(cudaStreamCreateWithFlags(&stream[i], cudaStreamNonBlocking));\n",
    ),
];

/// Week 6's zero copy: mapped memory got or reached other ways, the wait on a stream or an event.
pub const ZERO_COPY: [Rewrite; 7] = [
    Mistake {
        name: "host-register-mapped",
        what: "A and C from malloc, pinned and mapped where they are with cudaHostRegister, their device addresses from cudaHostGetDevicePointer.",
        correct: ZERO_COPY_ALLOC,
        wrong: r#"    A = (float*)malloc(2 * bytes);
    C = (float*)malloc(bytes);
    if (A == nullptr || C == nullptr) {
        std::fprintf(stderr, "out of host memory for %d floats\n", 3 * N);
        return 1;
    }
    CHECK_CUDA(cudaHostRegister(A, 2 * bytes, cudaHostRegisterMapped));
    CHECK_CUDA(cudaHostRegister(C, bytes, cudaHostRegisterMapped));
"#,
        also: &[(
            ZERO_COPY_FREE,
            "    CHECK_CUDA(cudaHostUnregister(A));\n    CHECK_CUDA(cudaHostUnregister(C));\n    free(A);\n    free(C);\n",
        )],
    },
    mistake(
        "unified-addresses",
        "the host pointers handed to the kernel as they are: with unified addressing (every 64-bit GPU the course uses) mapped memory has one address on both sides.",
        "    float *dev_A, *dev_B, *dev_C;\n    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_A, A, 0));\n    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_B, B, 0));\n    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_C, C, 0));\n    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);\n",
        "    vectorAdd<<<blocks, BSX>>>(A, B, C, N);  // one address space: the host's pointers reach the mapped pages\n",
    ),
    Mistake {
        name: "stream-synchronize",
        what: "the kernel on a stream of its own, and a wait for that stream.",
        correct: ZERO_COPY_LAUNCH,
        wrong: "    cudaStream_t stream;\n    CHECK_CUDA(cudaStreamCreate(&stream));\n    vectorAdd<<<blocks, BSX, 0, stream>>>(dev_A, dev_B, dev_C, N);\n",
        also: &[(
            ZERO_COPY_WAIT,
            "    CHECK_CUDA(cudaStreamSynchronize(stream));\n    CHECK_CUDA(cudaStreamDestroy(stream));\n",
        )],
    },
    Mistake {
        name: "event-wait",
        what: "an event recorded after the kernel, and a wait for the event.",
        correct: ZERO_COPY_LAUNCH,
        wrong: "    cudaEvent_t done;\n    CHECK_CUDA(cudaEventCreate(&done));\n    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);\n    CHECK_CUDA(cudaEventRecord(done));\n",
        also: &[(
            ZERO_COPY_WAIT,
            "    CHECK_CUDA(cudaEventSynchronize(done));\n    CHECK_CUDA(cudaEventDestroy(done));\n",
        )],
    },
    Mistake {
        name: "event-query",
        what: "an event recorded after the kernel, polled with cudaEventQuery until it has happened.",
        correct: ZERO_COPY_LAUNCH,
        wrong: "    cudaEvent_t done;\n    CHECK_CUDA(cudaEventCreate(&done));\n    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);\n    CHECK_CUDA(cudaEventRecord(done));\n",
        also: &[(
            ZERO_COPY_WAIT,
            "    cudaError_t state;\n    while ((state = cudaEventQuery(done)) == cudaErrorNotReady) {\n    }\n    CHECK_CUDA(state);\n    CHECK_CUDA(cudaEventDestroy(done));\n",
        )],
    },
    mistake(
        "portable-mapped",
        "mapped memory that is also portable (every context may use it).",
        ZERO_COPY_ALLOC,
        "    CHECK_CUDA(cudaHostAlloc((void**)&A, 2 * bytes, cudaHostAllocMapped | cudaHostAllocPortable));\n    CHECK_CUDA(cudaHostAlloc((void**)&C, bytes, cudaHostAllocMapped | cudaHostAllocPortable));\n",
    ),
    mistake(
        "write-combined-inputs",
        "A and B in write-combined mapped memory, which the host only writes and the GPU reads across the bus.",
        ZERO_COPY_ALLOC,
        "    CHECK_CUDA(cudaHostAlloc((void**)&A, 2 * bytes, cudaHostAllocMapped | cudaHostAllocWriteCombined));\n    CHECK_CUDA(cudaHostAlloc((void**)&C, bytes, cudaHostAllocMapped));\n",
    ),
];

/// Week 6's German program: the pinned buffers got other ways, the join by events.
pub const MMM_STREAMED_AND_PINNED: [Rewrite; 4] = [
    mistake(
        "mmm-host-alloc",
        "the buffers from cudaHostAlloc instead of cudaMallocHost.",
        MMM_PINNED_ALLOC,
        "    CHECK_CUDA(cudaHostAlloc((void**)&in, 2 * COUNT * bytes, cudaHostAllocDefault));\n    CHECK_CUDA(cudaHostAlloc((void**)&out, COUNT * bytes, cudaHostAllocDefault));\n",
    ),
    Mistake {
        name: "mmm-host-register",
        what: "the buffers from malloc, pinned where they are with cudaHostRegister (and unregistered before free).",
        correct: MMM_PINNED_ALLOC,
        wrong: r#"    in = (double*)malloc(2 * COUNT * bytes);
    out = (double*)malloc(COUNT * bytes);
    if (in == nullptr || out == nullptr) {
        std::fprintf(stderr, "out of host memory for %d products of %d x %d doubles\n", COUNT, N, N);
        return 1;
    }
    CHECK_CUDA(cudaHostRegister(in, 2 * COUNT * bytes, cudaHostRegisterDefault));
    CHECK_CUDA(cudaHostRegister(out, COUNT * bytes, cudaHostRegisterDefault));
"#,
        also: &[(
            MMM_PINNED_FREE,
            "    CHECK_CUDA(cudaHostUnregister(in));\n    CHECK_CUDA(cudaHostUnregister(out));\n    free(in);\n    free(out);\n",
        )],
    },
    mistake(
        "mmm-write-combined-inputs",
        "the inputs in write-combined pinned memory, which the host only writes and the GPU reads.",
        MMM_PINNED_ALLOC,
        "    CHECK_CUDA(cudaHostAlloc((void**)&in, 2 * COUNT * bytes, cudaHostAllocWriteCombined));\n    CHECK_CUDA(cudaMallocHost((void**)&out, COUNT * bytes));\n",
    ),
    mistake("mmm-events", "the join through an event per stream.", MMM_WAIT, MMM_WAIT_BY_EVENTS),
];
