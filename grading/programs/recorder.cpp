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
//   LAB_RECORDER_OUT    the trace file to write when the program exits;
//   LAB_RECORDER_NONCE  a random word the check made; the trace's first line carries it, so a file the
//                       program wrote itself (it would have to guess the word) is not taken for ours.
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
// written at exit (atexit, registered once CUPTI is loaded, so it runs before CUPTI's own teardown),
// into FILE.part and renamed: a program that dies or leaves by _exit leaves no trace, and the check
// says so.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

extern char** environ;

namespace {

char out_path[4096];
char nonce[128];
std::mutex lock;
std::string lines;  // the records read so far, as trace lines
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
        if (take(*entry, "LAB_RECORDER_OUT", out_path, sizeof out_path) ||
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

std::string line(const CUpti_Activity* record) {
    char text[1024];
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            std::snprintf(text, sizeof text, "kernel\t%llu\t%llu\t%u\t%u\t%d,%d,%d\t%d,%d,%d\t%s\n",
                          (unsigned long long)k->start, (unsigned long long)k->end, k->deviceId, k->streamId,
                          k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
                          k->name != nullptr ? k->name : "?");
            return text;
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
    lines += read;
    records += count;
    dropped += lost;
}

void write_trace() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const std::string part = std::string(out_path) + ".part";
    std::FILE* file = std::fopen(part.c_str(), "w");
    if (file == nullptr) return;
    const std::lock_guard<std::mutex> guard(lock);
    std::fprintf(file, "lab-recorder 1 %s\n", nonce);
    std::fwrite(lines.data(), 1, lines.size(), file);
    std::fprintf(file, "end\t%llu\t%llu\n", records, dropped);
    if (std::fclose(file) == 0) std::rename(part.c_str(), out_path);
}

}  // namespace

// Found by course_program.h with dlsym: write_floats calls it as it starts reading the results, so
// the check can tell a program that waited for its copies back from one that read too early (and
// was lucky). Names are the header's own words; anything else is cut to letters and underscores.
extern "C" void lab_recorder_mark(const char* name) {
    uint64_t now = 0;
    if (out_path[0] == '\0' || cuptiGetTimestamp(&now) != CUPTI_SUCCESS) return;
    std::string word;
    for (const char* c = name; c != nullptr && *c != '\0' && word.size() < 32; ++c) {
        if ((*c >= 'a' && *c <= 'z') || *c == '_') word += *c;
    }
    char text[96];
    std::snprintf(text, sizeof text, "mark\t%llu\t%s\n", (unsigned long long)now, word.c_str());
    const std::lock_guard<std::mutex> guard(lock);
    lines += text;
    ++records;
}

// Called by the CUDA driver at cuInit (CUDA_INJECTION64_PATH); a second call does nothing.
extern "C" int InitializeInjection(void) {
    static bool started = false;
    if (started || out_path[0] == '\0') return 1;
    started = true;
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return 0;
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
    for (const CUpti_ActivityKind kind : kinds) {
        if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) return 0;
    }
    std::atexit(write_trace);
    return 1;
}
