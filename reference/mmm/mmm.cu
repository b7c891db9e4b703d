// mmm.cu: C = A * B with the tiled kernel of the German slides (kernel.cuh: each block stages one
// BLOCK_SIZE x BLOCK_SIZE tile of A and one of B in shared memory per round). Main program: matrix.hpp.
// Beside: lab-mmm --kernel tiled --precision f64.
#include "matrix.hpp"
#include "kernel.cuh"

int main(int argc, char** argv) { return run(argc, argv, "mmm", mmm<Matrix>); }
