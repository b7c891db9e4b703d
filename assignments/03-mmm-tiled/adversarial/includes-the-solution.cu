// Red team (issue 39): includes our own solution from the workspace (through the compiler's working
// folder, wherever the checkout is) instead of writing the kernel.
// expect: compile error: includes
// why: a kernel file may include only the course's headers and those of the toolkit and the system.
#include "/proc/self/cwd/kernels/cuda/mmm.cu"
