// matrix_view.cuh: what a kernel receives for a Matrix, shared by mmm.cu and mmm_ladder.cu.
#pragma once

// The slides' non-owning "clone" of the host object: the sizes and the device pointer (cuda_data).
// Row-major, like common::Matrix.
template <typename T>
struct MatrixView {
    int rows;
    int cols;
    T* data;
    __device__ T& operator()(int i, int j) { return data[(size_t)i * cols + j]; }
};
