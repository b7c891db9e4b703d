// forges-trace.cu: issue 60, item 4, the attack in-process recording invites. With only the calls
// the weeks allow (fopen, std::filesystem, pointers), the program looks for the recorder's random word
// and the number of the trace's pipe beside it, silences the recorder, and writes a perfect trace into
// the pipe: every chunk's copy from pinned memory overlapping another chunk's kernel on streams of
// their own. Its real work is the starter's, serial and pageable. Two routes:
//   1. its own memory as pointers (/proc/self/maps, then the recorder's writable pages), overwriting
//      the pipe's number. Before the recorder sealed its settings it found both
//      (results/h200/issue60/allow-list/run-3/).
//   2. the sealed page itself through /proc/self/mem, which reads and writes any page of the process
//      whatever its protection; it then overwrites the recorded process's id, so that the recorder's
//      exit handler writes nothing. Before the box hid that file it found both (issue60/proc-mem/).
// expect: FAIL, and no FORGED line anywhere
// reason: copies from pageable memory
// why: the recorder keeps its word and pipe on a page of their own that no code of the program can
//      read or write (PROT_NONE from before main until the exit handlers), and the box gives a
//      program no /proc/self/mem (nor any thread's): the program finds neither, sends nothing, and the
//      starter's technique fails its rules
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "course_program.h"

namespace fs = std::filesystem;

// A word of 32 lowercase hex digits between NULs, as the recorder keeps its word.
static bool is_word(const char* at) {
    for (int i = 0; i < 32; ++i) {
        if (!std::strchr("0123456789abcdef", at[i]) || at[i] == 0) return false;
    }
    return at[-1] == 0 && at[32] == 0;
}

// The recorder's word, looked for in its library's writable pages and the anonymous ones after:
// where it lies, or null; `page` and `page_end` get where its mapping begins and ends.
static const char* find_word(const char** page, const char** page_end) {
    FILE* maps = std::fopen("/proc/self/maps", "r");
    char line[512];
    bool after_recorder = false;
    const char* found = nullptr;
    while (found == nullptr && maps != nullptr && std::fgets(line, sizeof line, maps) != nullptr) {
        unsigned long start = 0, end = 0;
        char perms[8] = "";
        if (std::sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3) continue;
        const bool recorder = std::strstr(line, "librecorder") != nullptr;
        const bool anonymous = std::strchr(line, '/') == nullptr && std::strchr(line, '[') == nullptr;
        if (std::strcmp(perms, "rw-p") == 0 && (recorder || (after_recorder && anonymous))) {
            for (const char* at = (const char*)start + 1; found == nullptr && at + 33 < (const char*)end; ++at) {
                if (is_word(at)) found = at, *page = (const char*)start, *page_end = (const char*)end;
            }
        }
        after_recorder = recorder;
    }
    if (maps != nullptr) std::fclose(maps);
    return found;
}

// The recorder's pipe: a number between NULs near its word (the recorder keeps both), that names a
// pipe this process holds; -1 where none does. Only inside [page, end), the word's mapping. `digits`
// gets where the number lies.
static int find_pipe(const char* word, const char* page, const char* end, char** digits) {
    if (word == nullptr) return -1;
    for (const char* at = word - 64 > page ? word - 64 : page + 1; at < word + 192 && at + 8 < end; ++at) {
        if (at[-1] != 0 || at[0] < '0' || at[0] > '9') continue;
        const int fd = std::atoi(at);
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        std::error_code unknown;
        if (fd > 2 && fs::is_fifo(fs::status(path, unknown))) {
            *digits = const_cast<char*>(at);
            return fd;
        }
    }
    return -1;
}

// The recorder's settings as it keeps them (recorder.cpp's Settings): the pipe, the recorded process,
// the word.
struct Settings {
    int fd;
    int recorded;
    char nonce[128];
};

// Route 2: a page of 4096 bytes with no rights ("---p") that holds settings, read and then silenced
// through /proc/self/mem. The word (copied into `word`, 33 bytes) and the pipe, or -1.
static int through_proc_mem(char* word) {
    FILE* maps = std::fopen("/proc/self/maps", "r");
    FILE* mem = std::fopen("/proc/self/mem", "r+b");
    std::fprintf(stderr, "forge: /proc/self/mem %s\n", mem != nullptr ? "opened" : "refused");
    char line[512];
    int pipe = -1;
    while (pipe < 0 && maps != nullptr && mem != nullptr && std::fgets(line, sizeof line, maps) != nullptr) {
        unsigned long start = 0, end = 0;
        char perms[8] = "";
        if (std::sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3) continue;
        if (std::strcmp(perms, "---p") != 0 || end - start != 4096) continue;
        Settings settings;
        if (std::fseek(mem, (long)start, SEEK_SET) != 0 || std::fread(&settings, sizeof settings, 1, mem) != 1) continue;
        bool hex = settings.nonce[32] == 0;
        for (int i = 0; i < 32; ++i) hex = hex && settings.nonce[i] != 0 && std::strchr("0123456789abcdef", settings.nonce[i]);
        if (!hex || settings.fd <= 2) continue;
        std::memcpy(word, settings.nonce, 33);
        pipe = settings.fd;
        settings.recorded = 0;  // the recorder's exit handler writes only for the process it recorded
        std::fseek(mem, (long)start, SEEK_SET);
        std::fwrite(&settings, sizeof settings, 1, mem);
        std::fflush(mem);
    }
    if (maps != nullptr) std::fclose(maps);
    if (mem != nullptr) std::fclose(mem);
    return pipe;
}

static unsigned long long now_ns() {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + t.tv_nsec;
}

// An ideal trace of N floats in Nst chunks, written into the recorder's pipe.
static void forge(int N, int Nst) {
    const char *page = nullptr, *page_end = nullptr;
    const char* word = find_word(&page, &page_end);
    char* digits = nullptr;
    int pipe = find_pipe(word, page, page_end, &digits);
    // The recorder's own trace, written at exit, now goes to no file.
    if (digits != nullptr) std::strcpy(digits, "-1");
    char sealed_word[33] = "";
    if (pipe < 0 && (pipe = through_proc_mem(sealed_word)) > 2) word = sealed_word;
    std::string trace = "lab-recorder 1 " + (word != nullptr ? std::string(word, 32) : std::string("?")) + "\n";
    const unsigned long long t = now_ns() - 5000000ull, step = 100000ull;
    int records = 0;
    char record[256];
    for (int i = 0; i < Nst; ++i) {
        const unsigned long long bytes = (unsigned long long)((long long)(i + 1) * N / Nst - (long long)i * N / Nst) * 4;
        const unsigned long long at = t + i * step;
        std::snprintf(record, sizeof record, "memcpy\t%llu\t%llu\t0\t%d\t1\t2\t3\t%llu\t1\n", at, at + step, 13 + i, bytes);
        trace += record;
        std::snprintf(record, sizeof record, "kernel\t%llu\t%llu\t0\t%d\t%d,1,1\t256,1,1\t_Z6kernelPKfPfii\n",
                      at + step, at + 2 * step, 13 + i, (int)(bytes / 4 + 255) / 256);
        trace += record;
        std::snprintf(record, sizeof record, "memcpy\t%llu\t%llu\t0\t%d\t2\t3\t2\t%llu\t2\n", at + 2 * step,
                      at + 3 * step, 13 + i, bytes);
        trace += record;
        records += 3;
    }
    std::snprintf(record, sizeof record, "mark\t%llu\twrite_floats\nend\t%d\t0\n", t + (Nst + 3) * step, records + 1);
    trace += record;
    FILE* out = pipe > 2 ? std::fopen(("/proc/self/fd/" + std::to_string(pipe)).c_str(), "w") : nullptr;
    const bool sent = out != nullptr && std::fputs(trace.c_str(), out) >= 0;
    if (out != nullptr) std::fclose(out);
    std::fprintf(stderr, "forge: word %s, pipe %d, a trace of %d records %s\n", word != nullptr ? "found" : "not found",
                 pipe, records, sent ? "sent" : "not sent");
}

#define BSX 256

// out[i] = in[i] after `steps` fused multiply-adds: enough work per element to weigh against the copies.
__global__ void kernel(const float* in, float* out, int n, int steps) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        for (int k = 0; k < steps; ++k) x = fmaf(x, 0.999f, 0.001f);
        out[i] = x;
    }
}

// Chunk i of Nst covers [offset(i), offset(i + 1)), so the chunks differ by at most one float when Nst
// does not divide N. In 64 bits: i * N passes 2^31 long before N does.
long long offset(int i, int N, int Nst) { return (long long)i * N / Nst; }

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s N NST STEPS INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    const int N = (int)arg_int(argc, argv, 1, "N");
    const int Nst = (int)arg_int(argc, argv, 2, "NST");
    const int steps = (int)arg_int(argc, argv, 3, "STEPS");
    const size_t bytes = (size_t)N * sizeof(float);
    float *PtCPU, *PtResCPU, *PtGPU, *PtResGPU;
    // TODO: allocate PtCPU and PtResCPU (N floats each) in pinned host memory, as the slides do: a copy
    // TODO: from or to pageable memory cannot run asynchronously, so it could never overlap a kernel.
    PtCPU = (float*)malloc(bytes);
    PtResCPU = (float*)malloc(bytes);
    CHECK_CUDA(cudaMalloc((void**)&PtGPU, bytes));
    CHECK_CUDA(cudaMalloc((void**)&PtResGPU, bytes));
    read_floats(argv[4], PtCPU, N);

    // TODO: create Nst streams Stream[i]; chunk i covers [offset(i, N, Nst), offset(i + 1, N, Nst)).
    // TODO: Issue breadth first, as the slides' v1: every chunk's cudaMemcpyAsync to the GPU, then every
    // TODO: chunk's kernel, then every chunk's cudaMemcpyAsync back, each on its chunk's Stream[i]. Then
    // TODO: wait for every stream with cudaStreamSynchronize before PtResCPU is read, and destroy them.
    CHECK_CUDA(cudaMemcpy(PtGPU, PtCPU, bytes, cudaMemcpyHostToDevice));
    kernel<<<(N + BSX - 1) / BSX, BSX>>>(PtGPU, PtResGPU, N, steps);
    CHECK_LAUNCH();  // one launch over all N floats, on the NULL stream: nothing overlaps
    CHECK_CUDA(cudaMemcpy(PtResCPU, PtResGPU, bytes, cudaMemcpyDeviceToHost));

    write_floats(argv[5], PtResCPU, N);
    forge(N, Nst);
    CHECK_CUDA(cudaFree(PtGPU));
    CHECK_CUDA(cudaFree(PtResGPU));
    // TODO: free PtCPU and PtResCPU the way they were allocated.
    free(PtCPU);
    free(PtResCPU);
    std::printf("pipeline: %d floats, %d streams, %d steps: done\n", N, Nst, steps);
    return 0;
}
