// recorder.cpp: the CUPTI recorder a graded program runs under (weeks 5 and 6: the host code is what
// is graded, so the check needs every copy and kernel the program made, with its stream, its host
// memory and its GPU time). The check compiles this file into a shared library and starts the
// student's program with it twice over, changing nothing in the program:
//
//   LD_PRELOAD             loads it before main(), so the constructor below takes the settings out of
//                          the environment before the program's own code can read them;
//   CUDA_INJECTION64_PATH  makes the CUDA driver call InitializeInjection() at cuInit: CUPTI's
//                          documented way in, which starts the activity records.
//
// Settings (removed from the environment, and their bytes wiped, before main):
//   LAB_RECORDER_FD     the write end of a pipe the check reads: the trace goes there when the program
//                       exits, and nowhere a program could find it on disk and rewrite it;
//   LAB_RECORDER_NONCE  a random word the check made; the trace's first line carries it, so a trace the
//                       program wrote into the pipe itself (it would have to guess the word) is not taken
//                       for ours, and anything after our trace makes the check refuse it.
// Both, and the process they belong to, are kept on a page of their own that nothing in the process can
// read or write from before main until the exit handlers run (PROT_NONE; changing that takes mprotect,
// which the weeks' static checks refuse): a program that searches the memory it can read for the word
// finds nothing, and one that reads or overwrites the page (to silence the recorder) crashes, a FAULT.
// The activity records are read out of CUPTI's buffers only at exit, so no list of trace lines waits
// in writable memory.
//
// The trace is text, one record per line, tab-separated; times are CUPTI's nanoseconds:
//   lab-recorder 2 NONCE
//   kernel  START END DEVICE STREAM GRID_X,GRID_Y,GRID_Z BLOCK_X,BLOCK_Y,BLOCK_Z NAME
//   memcpy  START END DEVICE STREAM COPY_KIND SRC_KIND DST_KIND BYTES CHANNEL
//   memset  START END DEVICE STREAM BYTES
//   mark    TIME NAME        the program reached NAME (course_program.h's write_floats calls
//                            lab_recorder_mark: when the results were read, on CUPTI's clock)
//   wait    TIME NAME        a CUDA call that makes the host wait for the GPU (a synchronize, a
//                            query that found the work done, a copy, a free) returned at TIME,
//                            successfully: the check's "waits" rule asks for one between the GPU's
//                            last work and the read, so a program that never waited fails even when
//                            its GPU happened to be done first (version 1 had no such lines)
//   end     RECORDS DROPPED
// (the kinds are CUPTI's numbers: CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind). It is
// written at exit (atexit, registered once CUPTI is loaded, so it runs before CUPTI's own teardown):
// a program that dies or leaves by _exit leaves no trace, and the check says so. A process the
// program forks writes none (the trace is the process's that the check started).
//
// Thread names: the box gives a program no file under /proc/self/task but its first thread's, since a
// thread's `mem` file there reads and writes every page of the process, this page included (the
// sandbox crate's procfs.rs). The CUDA driver names each thread it starts by writing
// /proc/self/task/<tid>/comm and fails when it cannot (cudaHostAlloc: "OS call failed"), so this
// library's fopen, found before the C library's, sends those names to /dev/null.
#include <cupti.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern char** environ;

namespace {

// The check's settings, on a page of their own (alignas pads the struct to the page), reached by the
// code below at a fixed offset, through no pointer a program could redirect.
struct alignas(4096) Settings {
    int fd;          // the pipe's write end
    pid_t recorded;  // the process whose trace this is
    char nonce[128];
};
Settings settings;
bool recording = false;  // the settings were given and sealed: InitializeInjection starts CUPTI
// Never freed: CUPTI may hand over a buffer after the library's static destructors have run.
std::mutex& lock = *new std::mutex;
struct Completed {
    uint8_t* buffer;
    size_t valid;
};
std::vector<Completed>& completed = *new std::vector<Completed>;  // CUPTI's full buffers, read at exit
std::string& marks = *new std::string;                           // the `mark` and `wait` lines so far
unsigned long long mark_count = 0, dropped = 0;

// Copies the value of `NAME=value` into `into` when `entry` is that setting (byte by byte: no copy
// is left in a formatting routine's buffers).
bool take(const char* entry, const char* name, char* into, size_t size) {
    const size_t length = std::strlen(name);
    if (std::strncmp(entry, name, length) != 0 || entry[length] != '=') return false;
    size_t i = 0;
    for (const char* value = entry + length + 1; value[i] != '\0' && i + 1 < size; ++i) into[i] = value[i];
    into[i] = '\0';
    return true;
}

// Before main: our settings out of the environment. The bytes are wiped in place too, since
// /proc/self/environ shows the process's first environment block, whatever getenv says. Then the
// settings page is sealed; where that fails nothing is recorded, and the check says there is no trace.
__attribute__((constructor)) void take_settings() {
    char fd[32] = "", nonce[sizeof settings.nonce] = "";
    for (char** entry = environ; entry != nullptr && *entry != nullptr;) {
        if (take(*entry, "LAB_RECORDER_FD", fd, sizeof fd) || take(*entry, "LAB_RECORDER_NONCE", nonce, sizeof nonce)) {
            std::memset(*entry, 0, std::strlen(*entry));
            for (char** rest = entry; *rest != nullptr; ++rest) rest[0] = rest[1];
        } else {
            ++entry;
        }
    }
    if (fd[0] == '\0') return;
    settings.fd = std::atoi(fd);
    settings.recorded = getpid();
    std::memcpy(settings.nonce, nonce, sizeof nonce);
    explicit_bzero(nonce, sizeof nonce);
    recording = mprotect(&settings, sizeof settings, PROT_NONE) == 0;
}

constexpr size_t BUFFER_BYTES = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, BUFFER_BYTES));
    *size = *buffer != nullptr ? BUFFER_BYTES : 0;
    *max_records = 0;
}

// A kernel's name as one field: a tab or a line break in it would split the record.
std::string field(const char* text) {
    std::string out = text != nullptr ? text : "?";
    for (char& c : out) {
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    }
    return out;
}

std::string line(const CUpti_Activity* record) {
    char text[256];
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            std::snprintf(text, sizeof text, "kernel\t%llu\t%llu\t%u\t%u\t%d,%d,%d\t%d,%d,%d\t",
                          (unsigned long long)k->start, (unsigned long long)k->end, k->deviceId, k->streamId,
                          k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ);
            return text + field(k->name) + "\n";
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
            std::snprintf(text, sizeof text, "memcpy\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%llu\t%u\n",
                          (unsigned long long)m->start, (unsigned long long)m->end, m->deviceId, m->streamId,
                          m->copyKind, m->srcKind, m->dstKind, (unsigned long long)m->bytes, m->channelID);
            return text;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
            std::snprintf(text, sizeof text, "memset\t%llu\t%llu\t%u\t%u\t%llu\n", (unsigned long long)m->start,
                          (unsigned long long)m->end, m->deviceId, m->streamId, (unsigned long long)m->bytes);
            return text;
        }
        default:
            return "";
    }
}

// A full buffer is kept as it is and read at exit (write_trace).
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
    size_t lost = 0;
    cuptiActivityGetNumDroppedRecords(context, stream, &lost);
    const std::lock_guard<std::mutex> guard(lock);
    completed.push_back({buffer, valid});
    dropped += lost;
}

// All of `text` into the pipe, whatever size each write takes.
void write_all(int fd, const std::string& text) {
    for (size_t done = 0; done < text.size();) {
        const ssize_t wrote = write(fd, text.data() + done, text.size() - done);
        if (wrote <= 0) return;
        done += (size_t)wrote;
    }
}

// At exit: CUPTI's last records flushed, every buffer read into trace lines, the trace written once.
// The settings page is opened for reading here only.
void write_trace() {
    if (mprotect(&settings, sizeof settings, PROT_READ) != 0 || getpid() != settings.recorded) return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const std::lock_guard<std::mutex> guard(lock);
    static bool written = false;
    if (written) return;
    written = true;
    std::string lines;
    unsigned long long records = mark_count;
    for (const Completed& full : completed) {
        CUpti_Activity* record = nullptr;
        while (cuptiActivityGetNextRecord(full.buffer, full.valid, &record) == CUPTI_SUCCESS) {
            lines += line(record);
            ++records;
        }
        std::free(full.buffer);
    }
    completed.clear();
    char end[64];
    std::snprintf(end, sizeof end, "end\t%llu\t%llu\n", records, dropped);
    write_all(settings.fd, std::string("lab-recorder 2 ") + settings.nonce + "\n" + lines + marks + end);
    close(settings.fd);
}

}  // namespace

// Bound to course_program.h's weak declaration by the dynamic loader: write_floats calls it as it starts reading the results, so
// the check can tell a program that waited for its copies back from one that read too early (and
// was lucky). Names are the header's own words; anything else is cut to letters and underscores.
extern "C" void lab_recorder_mark(const char* name) {
    uint64_t now = 0;
    if (!recording || cuptiGetTimestamp(&now) != CUPTI_SUCCESS) return;
    std::string word;
    for (const char* c = name; c != nullptr && *c != '\0' && word.size() < 32; ++c) {
        if ((*c >= 'a' && *c <= 'z') || *c == '_') word += *c;
    }
    char text[96];
    std::snprintf(text, sizeof text, "mark\t%llu\t%s\n", (unsigned long long)now, word.c_str());
    const std::lock_guard<std::mutex> guard(lock);
    marks += text;
    ++mark_count;
}

namespace {

// The calls after which the host may take the GPU's work as done (by name, runtime and driver API
// alike; a name's version suffix, as in cuMemcpyDtoH_v2, is covered by the prefix). Copies count
// all of them: a synchronous copy waits, and one from pageable memory returns when it is done. A
// free waits too, but not the stream-ordered one (cudaFreeAsync, cuMemFreeAsync).
bool waits_for_gpu(const char* function) {
    static const char* const prefixes[] = {
        "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
        "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize",    "cudaStreamQuery",
        "cudaEventQuery",        "cuStreamQuery",         "cuEventQuery",          "cudaMemcpy",
        "cuMemcpy",              "cudaFree",              "cuMemFree",
    };
    if (function == nullptr || std::strstr(function, "FreeAsync") != nullptr) return false;
    for (const char* prefix : prefixes) {
        if (std::strncmp(function, prefix, std::strlen(prefix)) == 0) return true;
    }
    return false;
}

// CUPTI's callback at every runtime and driver API call's exit: a call that waits for the GPU and
// succeeded (cudaSuccess and CUDA_SUCCESS are both 0; a query of unfinished work returns NotReady)
// becomes a `wait` line, timed on the same clock as the marks and the activity records.
void CUPTIAPI api_returned(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite != CUPTI_API_EXIT || call->functionReturnValue == nullptr ||
        *static_cast<const int*>(call->functionReturnValue) != 0 || !waits_for_gpu(call->functionName)) {
        return;
    }
    uint64_t now = 0;
    if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) return;
    char text[160];
    std::snprintf(text, sizeof text, "wait\t%llu\t%s\n", (unsigned long long)now, field(call->functionName).c_str());
    const std::lock_guard<std::mutex> guard(lock);
    marks += text;
    ++mark_count;
}

// Whether `path` is a thread's name, /proc/self/task/<tid>/comm.
bool thread_name(const char* path) {
    const char prefix[] = "/proc/self/task/";
    if (path == nullptr || std::strncmp(path, prefix, sizeof prefix - 1) != 0) return false;
    const char* tid = path + sizeof prefix - 1;
    const char* end = tid;
    while (*end >= '0' && *end <= '9') ++end;
    return end != tid && std::strcmp(end, "/comm") == 0;
}

// The C library's `name` (fopen or fopen64) on `path`, or on /dev/null for a thread's name, read or
// written (the box allows neither for threads after the first; reading one reads nothing).
FILE* open_file(const char* name, const char* path, const char* mode) {
    using Open = FILE* (*)(const char*, const char*);
    const auto real = reinterpret_cast<Open>(dlsym(RTLD_NEXT, name));
    if (real == nullptr) return nullptr;
    return real(thread_name(path) ? "/dev/null" : path, mode);
}

}  // namespace

extern "C" FILE* fopen(const char* path, const char* mode) { return open_file("fopen", path, mode); }
extern "C" FILE* fopen64(const char* path, const char* mode) { return open_file("fopen64", path, mode); }

// Called by the CUDA driver at cuInit (CUDA_INJECTION64_PATH); a second call does nothing.
extern "C" int InitializeInjection(void) {
    static bool started = false;
    if (started || !recording) return 1;
    started = true;
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return 0;
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
    for (const CUpti_ActivityKind kind : kinds) {
        if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) return 0;
    }
    CUpti_SubscriberHandle subscriber;
    if (cuptiSubscribe(&subscriber, api_returned, nullptr) != CUPTI_SUCCESS ||
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) {
        return 0;
    }
    std::atexit(write_trace);
    return 1;
}
