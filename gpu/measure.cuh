// What the plain CUDA C++ programs in gpu/ share (harness.cu, copy_lab.cu, transpose_lab.cu):
// a checked CUDA call, CUDA-event timing of launches with the output reset before each one
// (outside the events), and the median.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                         cudaGetErrorString(e_));                                          \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// `warmup` untimed launches, then `reps` timed ones (µs each), every one after `bytes` of
// `out` are set to the byte `fill` (0 for a sum's result word, 0xff to poison an output).
template <typename F>
std::vector<double> time_launches(F launch, void* out, size_t bytes, int fill, int reps,
                                  int warmup = 3) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> us;
    for (int r = -warmup; r < reps; ++r) {
        CHECK(cudaMemsetAsync(out, fill, bytes));
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 0) us.push_back(ms * 1e3);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return us;
}
