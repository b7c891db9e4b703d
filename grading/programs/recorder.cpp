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
//
// The trace is text, one record per line, tab-separated; times are CUPTI's nanoseconds:
//   lab-recorder 1 NONCE
//   kernel  START END DEVICE STREAM GRID_X,GRID_Y,GRID_Z BLOCK_X,BLOCK_Y,BLOCK_Z NAME
//   memcpy  START END DEVICE STREAM COPY_KIND SRC_KIND DST_KIND BYTES CHANNEL
//   memset  START END DEVICE STREAM BYTES
//   mark    TIME NAME        the program reached NAME (course_program.h's write_floats calls
//                            lab_recorder_mark: when the results were read, on CUPTI's clock)
//   end     RECORDS DROPPED
// (the kinds are CUPTI's numbers: CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind). It is
// written at exit (atexit, registered once CUPTI is loaded, so it runs before CUPTI's own teardown):
// a program that dies or leaves by _exit leaves no trace, and the check says so. A process the
// program forks writes none (the trace is the process's that the check started).
#include <cupti.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

extern char** environ;

namespace {

char out_fd[32];
char nonce[128];
pid_t recorded = 0;  // the process whose trace this is
// Never freed: CUPTI may hand over a buffer after the library's static destructors have run.
std::mutex& lock = *new std::mutex;
std::string& lines = *new std::string;  // the records read so far, as trace lines
bool closed = false;                   // the trace is written: later records are dropped
unsigned long long records = 0, dropped = 0;

// Copies the value of `NAME=value` into `into` when `entry` is that setting.
bool take(const char* entry, const char* name, char* into, size_t size) {
    const size_t length = std::strlen(name);
    if (std::strncmp(entry, name, length) != 0 || entry[length] != '=') return false;
    std::snprintf(into, size, "%s", entry + length + 1);
    return true;
}

// Before main: our settings out of the environment. The bytes are wiped in place too, since
// /proc/self/environ shows the process's first environment block, whatever getenv says.
__attribute__((constructor)) void take_settings() {
    for (char** entry = environ; entry != nullptr && *entry != nullptr;) {
        if (take(*entry, "LAB_RECORDER_FD", out_fd, sizeof out_fd) ||
            take(*entry, "LAB_RECORDER_NONCE", nonce, sizeof nonce)) {
            std::memset(*entry, 0, std::strlen(*entry));
            for (char** rest = entry; *rest != nullptr; ++rest) rest[0] = rest[1];
        } else {
            ++entry;
        }
    }
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

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
    std::string read;
    unsigned long long count = 0;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        read += line(record);
        ++count;
    }
    size_t lost = 0;
    cuptiActivityGetNumDroppedRecords(context, stream, &lost);
    std::free(buffer);
    const std::lock_guard<std::mutex> guard(lock);
    if (closed) return;
    lines += read;
    records += count;
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

void write_trace() {
    if (getpid() != recorded) return;  // a forked child's exit
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const std::lock_guard<std::mutex> guard(lock);
    closed = true;
    char end[64];
    std::snprintf(end, sizeof end, "end\t%llu\t%llu\n", records, dropped);
    const int fd = std::atoi(out_fd);
    write_all(fd, std::string("lab-recorder 1 ") + nonce + "\n" + lines + end);
    close(fd);
}

}  // namespace

// Bound to course_program.h's weak declaration by the dynamic loader: write_floats calls it as it starts reading the results, so
// the check can tell a program that waited for its copies back from one that read too early (and
// was lucky). Names are the header's own words; anything else is cut to letters and underscores.
extern "C" void lab_recorder_mark(const char* name) {
    uint64_t now = 0;
    if (out_fd[0] == '\0' || cuptiGetTimestamp(&now) != CUPTI_SUCCESS) return;
    std::string word;
    for (const char* c = name; c != nullptr && *c != '\0' && word.size() < 32; ++c) {
        if ((*c >= 'a' && *c <= 'z') || *c == '_') word += *c;
    }
    char text[96];
    std::snprintf(text, sizeof text, "mark\t%llu\t%s\n", (unsigned long long)now, word.c_str());
    const std::lock_guard<std::mutex> guard(lock);
    if (closed) return;
    lines += text;
    ++records;
}

// Called by the CUDA driver at cuInit (CUDA_INJECTION64_PATH); a second call does nothing.
extern "C" int InitializeInjection(void) {
    static bool started = false;
    if (started || out_fd[0] == '\0') return 1;
    started = true;
    recorded = getpid();
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return 0;
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
    for (const CUpti_ActivityKind kind : kinds) {
        if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) return 0;
    }
    std::atexit(write_trace);
    return 1;
}
