// mmm-streamed-and-pinned.cu (German table): mmm-streamed with the matrices in pinned memory
// (cudaMallocHost), so one stream's copies run while another's kernel does. Beside: lab-pinned and
// lab-mapped, row mmm-streamed-and-pinned.
#include "streamed.hpp"

int main(int argc, char** argv) { return run_streamed(argc, argv, Pinned, "mmm-streamed-and-pinned"); }
