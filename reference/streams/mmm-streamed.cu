// mmm-streamed.cu (German table): one stream per product, from pageable memory, so the copies cannot
// overlap the kernels. Beside: lab-streams --mode mmm, row mmm-streamed.
#include "streamed.hpp"

int main(int argc, char** argv) { return run_streamed(argc, argv, Pageable, "mmm-streamed          "); }
