// integrands.cuh: the functions lab-simpson and lab-dynamic-parallel integrate, one functor each, so
// every integrand is compiled into its own kernel and ptxas reports each separately (sin, for one,
// brings a stack frame for its slow-path argument reduction; the slide's 4/(1+x^2) needs none).
// The Rust side, common::integrand::Integrand, has the same functions for the CPU reference.
#pragma once

// 4/(1+x^2): its integral over [0, 1] is pi. The slide's integrand.
struct FourOverOnePlusXSquared {
    __device__ double operator()(double x) const { return 4.0 / (1.0 + x * x); }
};

struct Sine {
    __device__ double operator()(double x) const { return sin(x); }
};

struct Exponential {
    __device__ double operator()(double x) const { return exp(x); }
};

// A sharp peak of height 10^4 and width about 0.01 at x = 0.3: hard for a uniform grid.
struct Peak {
    __device__ double operator()(double x) const { return 1.0 / ((x - 0.3) * (x - 0.3) + 1.0e-4); }
};
