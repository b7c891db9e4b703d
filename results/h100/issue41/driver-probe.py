# Where the driver's time goes and whether it pins threads (issue 41, item 1 probe).
import ctypes, os, threading, time
cuda = ctypes.CDLL("libcuda.so.1")
main_tid = threading.get_native_id()
seen = []
stop = False
def watch():
    while not stop:
        seen.append((time.perf_counter(), sorted(os.sched_getaffinity(main_tid))[:4], len(os.sched_getaffinity(main_tid)), len(os.sched_getaffinity(0))))
        time.sleep(0.002)
print("cpus before:", len(os.sched_getaffinity(0)), "cpu_count", os.cpu_count())
w = threading.Thread(target=watch); w.start()
t0 = time.perf_counter(); r = cuda.cuInit(0); t1 = time.perf_counter()
dev = ctypes.c_int(); cuda.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); t2 = time.perf_counter(); r2 = cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev); t3 = time.perf_counter()
free = ctypes.c_size_t(); tot = ctypes.c_size_t(); cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(tot)); t4 = time.perf_counter()
stop = True; w.join()
counts = sorted(set((s[2], s[3]) for s in seen))
print(f"cuInit {1e3*(t1-t0):.1f} ms (rc {r}), cuCtxCreate {1e3*(t3-t2):.1f} ms (rc {r2}), first memGetInfo {1e3*(t4-t3):.1f} ms")
print("main-thread affinity sizes seen during init (main, watcher):", counts)
print("main affinity after:", len(os.sched_getaffinity(main_tid)), "watcher/self:", len(os.sched_getaffinity(0)))
p = ctypes.c_void_p(); t5 = time.perf_counter(); cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(512<<20)); t6 = time.perf_counter(); cuda.cuMemFree_v2(p); t7 = time.perf_counter()
print(f"cuMemAlloc 512 MiB {1e3*(t6-t5):.1f} ms, free {1e3*(t7-t6):.1f} ms")
t8 = time.perf_counter(); r3 = cuda.cuCtxDestroy_v2(ctx); t9 = time.perf_counter()
print(f"cuCtxDestroy {1e3*(t9-t8):.1f} ms (rc {r3})")
# host memory in gVisor: first touch of 1 GiB, and free
import mmap
t10 = time.perf_counter(); m = mmap.mmap(-1, 1<<30); t11 = time.perf_counter()
for off in range(0, 1<<30, 1<<21): m[off] = 1
t12 = time.perf_counter(); m.close(); t13 = time.perf_counter()
print(f"mmap 1 GiB {1e3*(t11-t10):.1f} ms, touch every 2 MiB {1e3*(t12-t11):.1f} ms, munmap {1e3*(t13-t12):.1f} ms")
