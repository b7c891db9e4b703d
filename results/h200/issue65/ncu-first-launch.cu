// Issue 65: where Nsight Compute's first measured launch spends its time, and when it takes and
// gives back its lock across processes (nsight_compute/lock in its temporary folder). Run under
// ncu by ncu-first-launch.sh; prints, in seconds since the process began:
//   context   cudaFree(0)
//   warmup    a one-thread kernel `warmup` (only with the argument "warmup")
//   pause     1.5 s without the GPU, with whether ncu's lock is held by this process at its start
//   mmm N     four launches of a naive 256 x 256 x 256 `mmm_f32`, each waited for
//   end       with whether the lock is held then
// The lock is read from /proc/locks: the inode of ncu's lock file against each line's. Run 54 showed
// that this file is held shared by every process ncu measures, so what it prints of it says little;
// the lock the processes wait for is the one beside it named after the GPU's UUID (lock.<UUID>,
// run 55's locks.tsv.gz), which this program does not read.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

__global__ void warmup(int *flag) {
    if (flag) *flag = 1;
}

__global__ void mmm_f32(const float *a, const float *b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float sum = 0;
    for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
}

static const auto start = std::chrono::steady_clock::now();

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "held by me", "held by pid P", "free" or "no lock file" for ncu's lock.
static std::string ncu_lock() {
    const char *tmp = getenv("TMPDIR");
    std::string path = std::string(tmp ? tmp : "/tmp") + "/nvidia/nsight_compute/lock";
    struct stat info;
    if (stat(path.c_str(), &info) != 0) return "no lock file";
    FILE *locks = fopen("/proc/locks", "r");
    char line[512], device[128];
    std::string state = "free";
    while (locks && fgets(line, sizeof line, locks)) {
        // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's has "->" after the number.
        int pid = 0;
        unsigned long inode = 0;
        if (strstr(line, "->") || sscanf(line, "%*s %*s %*s %*s %d %127s", &pid, device) != 2) continue;
        const char *last = strrchr(device, ':');
        if (!last || sscanf(last + 1, "%lu", &inode) != 1 || inode != (unsigned long)info.st_ino) continue;
        state = pid == getpid() ? "held by me" : "held by pid " + std::to_string(pid);
    }
    if (locks) fclose(locks);
    return state;
}

int main(int argc, char **argv) {
    bool warm = argc > 1 && strcmp(argv[1], "warmup") == 0;
    double t = now();
    cudaFree(0);
    printf("%d context %.3f s (at %.3f)\n", getpid(), now() - t, now());
    if (warm) {
        t = now();
        warmup<<<1, 1>>>(nullptr);
        cudaDeviceSynchronize();
        printf("%d warmup %.3f s (at %.3f)\n", getpid(), now() - t, now());
    }
    printf("%d pause at %.3f, ncu's lock %s\n", getpid(), now(), ncu_lock().c_str());
    fflush(stdout);
    usleep(1500000);
    const int n = 256;
    float *a, *b, *c;
    cudaMalloc(&a, n * n * 4);
    cudaMalloc(&b, n * n * 4);
    cudaMalloc(&c, n * n * 4);
    cudaMemset(a, 0, n * n * 4);
    cudaMemset(b, 0, n * n * 4);
    for (int i = 0; i < 4; ++i) {
        t = now();
        mmm_f32<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(a, b, c, n);
        cudaError_t error = cudaDeviceSynchronize();
        printf("%d mmm %d %.3f s (at %.3f) %s\n", getpid(), i, now() - t, now(), cudaGetErrorString(error));
    }
    printf("%d end at %.3f, ncu's lock %s\n", getpid(), now(), ncu_lock().c_str());
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
