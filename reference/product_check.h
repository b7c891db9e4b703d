// product_check.h: is C = A * B? Freivalds' test, the check the lab's large products use too: for a
// random vector x, A * (B * x) must equal C * x. O(n^2) instead of O(n^3), and a wrong element of C (or
// a NaN left by a product that never ran) shows in C * x with near certainty.
#pragma once
#include <cmath>
#include <vector>

#include "check.h"

// A is rows x inner, B is inner x cols, C is rows x cols, all row-major. Returns the largest
// |C x - A (B x)| relative to |A| (|B| |x|), the size the rounding errors scale with; NaN if C holds one.
template <typename T>
double product_error(const T* A, const T* B, const T* C, size_t rows, size_t inner, size_t cols, Random& random) {
    std::vector<double> x(cols), bx(inner, 0.0), bx_abs(inner, 0.0);
    for (double& value : x) value = random.uniform(-1.0, 1.0);
    for (size_t k = 0; k < inner; ++k) {
        for (size_t j = 0; j < cols; ++j) {
            bx[k] += (double)B[k * cols + j] * x[j];
            bx_abs[k] += std::fabs((double)B[k * cols + j] * x[j]);
        }
    }
    double worst = 0;
    for (size_t i = 0; i < rows; ++i) {
        double abx = 0, scale = 0, cx = 0;
        for (size_t k = 0; k < inner; ++k) {
            abx += (double)A[i * inner + k] * bx[k];
            scale += std::fabs((double)A[i * inner + k]) * bx_abs[k];
        }
        for (size_t j = 0; j < cols; ++j) cx += (double)C[i * cols + j] * x[j];
        const double error = std::fabs(cx - abx) / scale;
        if (!(error <= worst)) worst = error;  // keeps a NaN
    }
    return worst;
}
