// proc-opens.c: which files under /proc a CUDA program opens, and how (an LD_PRELOAD shim for
// run-2.sh; what the box of a program must still allow).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void note(const char* how, const char* path, int flags) {
    if (path != NULL && strncmp(path, "/proc", 5) == 0) {
        char line[512];
        int n = snprintf(line, sizeof line, "proc-open %s %s flags=%#o\n", how, path, flags);
        write(2, line, n > 0 && n < (int)sizeof line ? n : 0);
    }
}

#define SHIM(name)                                                                            \
    int name(const char* path, int flags, ...) {                                              \
        va_list args; va_start(args, flags); int mode = va_arg(args, int); va_end(args);       \
        note(#name, path, flags);                                                             \
        int (*real)(const char*, int, ...) = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, #name); \
        return real(path, flags, mode);                                                       \
    }
SHIM(open)
SHIM(open64)
#define SHIMAT(name)                                                                          \
    int name(int dir, const char* path, int flags, ...) {                                     \
        va_list args; va_start(args, flags); int mode = va_arg(args, int); va_end(args);       \
        note(#name, path, flags);                                                             \
        int (*real)(int, const char*, int, ...) = (int (*)(int, const char*, int, ...))dlsym(RTLD_NEXT, #name); \
        return real(dir, path, flags, mode);                                                  \
    }
SHIMAT(openat)
SHIMAT(openat64)
FILE* fopen(const char* path, const char* mode) {
    note("fopen", path, mode[0] == 'r' && mode[1] != '+' ? 0 : 1);
    FILE* (*real)(const char*, const char*) = (FILE * (*)(const char*, const char*)) dlsym(RTLD_NEXT, "fopen");
    return real(path, mode);
}
FILE* fopen64(const char* path, const char* mode) {
    note("fopen64", path, mode[0] == 'r' && mode[1] != '+' ? 0 : 1);
    FILE* (*real)(const char*, const char*) = (FILE * (*)(const char*, const char*)) dlsym(RTLD_NEXT, "fopen64");
    return real(path, mode);
}
