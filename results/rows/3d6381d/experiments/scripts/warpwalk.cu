// Prototype: short rows, a warp per row. Mode 0: a flat grid (a warp per row, 2 a block, as the
// lab's). Mode 1: as many blocks as fit, each warp walking rows a grid of warps apart. Mode 2:
// the walk, with the next row's loads issued before this row's merge and stores.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../gpu/measure.cuh"

enum { SOFTMAX = 0, RMS = 1, LN = 2 };

__device__ __forceinline__ uint64_t evict_last() {
    uint64_t q;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(q));
    return q;
}
__device__ __forceinline__ uint4 ld(const uint4* p, uint64_t pol) {
    uint4 v;
    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
    return v;
}
template <typename T> struct El;
template <> struct El<float> {
    static constexpr int N = 4;
    __device__ static float get(const uint4& v, int k) { return __uint_as_float((&v.x)[k]); }
    __device__ static uint4 pack(const float* o) {
        return make_uint4(__float_as_uint(o[0]), __float_as_uint(o[1]), __float_as_uint(o[2]),
                          __float_as_uint(o[3]));
    }
};
template <> struct El<__nv_bfloat16> {
    static constexpr int N = 8;
    __device__ static float get(const uint4& v, int k) {
        uint32_t w = (&v.x)[k / 2];
        return __uint_as_float(k % 2 ? (w & 0xffff0000u) : (w << 16));
    }
    __device__ static uint4 pack(const float* o) {
        uint32_t w[4];
        for (int i = 0; i < 4; ++i) {
            __nv_bfloat162 h = __floats2bfloat162_rn(o[2 * i], o[2 * i + 1]);
            w[i] = *reinterpret_cast<uint32_t*>(&h);
        }
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
};
__device__ __forceinline__ float wsum(float v) {
    for (int m = 16; m; m /= 2) v += __shfl_xor_sync(~0u, v, m);
    return v;
}
__device__ __forceinline__ float wmax(float v) {
    for (int m = 16; m; m /= 2) v = fmaxf(v, __shfl_xor_sync(~0u, v, m));
    return v;
}

// One row held in h (L vectors a lane): its statistic and its output.
template <typename T, int OP, int L>
__device__ __forceinline__ void finish(const uint4 (&h)[L], const uint4* wr, const uint4* br,
                                       uint4* yr, int cols, float eps, uint64_t pol) {
    using E = El<T>;
    constexpr int N = E::N;
    const int lane = threadIdx.x % 32;
    float A = 0, B = 0;
    if (OP == SOFTMAX) {
        float m = -INFINITY;
#pragma unroll
        for (int j = 0; j < L; ++j)
#pragma unroll
            for (int k = 0; k < N; ++k) m = fmaxf(m, E::get(h[j], k));
        m = wmax(m);
        float s = 0;
#pragma unroll
        for (int j = 0; j < L; ++j)
#pragma unroll
            for (int k = 0; k < N; ++k) s += __expf(E::get(h[j], k) - m);
        A = m;
        B = 1.f / wsum(s);
    } else if (OP == RMS) {
        float q = 0;
#pragma unroll
        for (int j = 0; j < L; ++j)
#pragma unroll
            for (int k = 0; k < N; ++k) q += E::get(h[j], k) * E::get(h[j], k);
        A = rsqrtf(wsum(q) / cols + eps);
    } else {
        float s = 0;
#pragma unroll
        for (int j = 0; j < L; ++j)
#pragma unroll
            for (int k = 0; k < N; ++k) s += E::get(h[j], k);
        float mean = wsum(s) / cols, q = 0;
#pragma unroll
        for (int j = 0; j < L; ++j)
#pragma unroll
            for (int k = 0; k < N; ++k) {
                float d = E::get(h[j], k) - mean;
                q += d * d;
            }
        A = mean;
        B = rsqrtf(wsum(q) / cols + eps);
    }
#pragma unroll
    for (int j = 0; j < L; ++j) {
        int v = lane + 32 * j;
        uint4 wv = OP != SOFTMAX ? ld(wr + v, pol) : uint4{};
        uint4 bv = OP == LN ? ld(br + v, pol) : uint4{};
        float o[N];
#pragma unroll
        for (int k = 0; k < N; ++k) {
            float x = E::get(h[j], k);
            o[k] = OP == SOFTMAX ? __expf(x - A) * B
                   : OP == RMS   ? x * A * E::get(wv, k)
                                 : (x - A) * B * E::get(wv, k) + E::get(bv, k);
        }
        yr[v] = E::pack(o);
    }
}

template <typename T, int OP, int L, int MODE>
__global__ void __launch_bounds__(64) warprows(const T* x, const T* w, const T* b, T* y, int rows,
                                               int cols, float eps) {
    const int lane = threadIdx.x % 32;
    const int warps = gridDim.x * (blockDim.x / 32);
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const uint64_t pol = evict_last();
    const uint4* wr = reinterpret_cast<const uint4*>(w);
    const uint4* br = reinterpret_cast<const uint4*>(b);
    auto xr = [&](int r) { return reinterpret_cast<const uint4*>(x + (size_t)r * cols); };
    auto yr = [&](int r) { return reinterpret_cast<uint4*>(y + (size_t)r * cols); };
    if (row >= rows) return;
    uint4 h[L];
#pragma unroll
    for (int j = 0; j < L; ++j) h[j] = ld(xr(row) + lane + 32 * j, pol);
    if (MODE == 0) {
        finish<T, OP, L>(h, wr, br, yr(row), cols, eps, pol);
        return;
    }
    for (;;) {
        int next = row + warps;
        if (MODE == 2) {
            uint4 g[L];
            int n = min(next, rows - 1);
#pragma unroll
            for (int j = 0; j < L; ++j) g[j] = ld(xr(n) + lane + 32 * j, pol);
            finish<T, OP, L>(h, wr, br, yr(row), cols, eps, pol);
#pragma unroll
            for (int j = 0; j < L; ++j) h[j] = g[j];
        } else {
            finish<T, OP, L>(h, wr, br, yr(row), cols, eps, pol);
            if (next < rows)
#pragma unroll
                for (int j = 0; j < L; ++j) h[j] = ld(xr(next) + lane + 32 * j, pol);
        }
        row = next;
        if (row >= rows) break;
    }
}

template <typename T, int OP, int L, int MODE>
void run(int rows, int cols, int per_sm, int reps, double copy_us, T* x, T* w, T* b, T* y,
         const char* tname) {
    auto k = warprows<T, OP, L, MODE>;
    int blocks = (rows + 1) / 2;
    if (MODE) {
        int fit = 0, sms = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k, 64, 0));
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        blocks = std::min(blocks, sms * (per_sm ? std::min(per_sm, fit) : fit));
    }
    float eps = OP == LN ? 1e-5f : 1e-6f;
    auto launch = [&] { k<<<blocks, 64>>>(x, w, b, y, rows, cols, eps); };
    size_t bytes = (size_t)rows * cols * sizeof(T);
    auto us = time_launches(launch, y, bytes, 0xff, reps);
    double med = median(us);
    std::sort(us.begin(), us.end());
    int weights = OP == SOFTMAX ? 0 : OP == RMS ? 1 : 2;
    double kb = (2.0 * rows + weights) * cols * sizeof(T);
    double xc = (kb / med) / (2.0 * bytes / copy_us);
    std::vector<T> hx(cols), hy(cols), hw(cols), hb(cols);
    double err = 0;
    for (int r : {0, rows / 3, rows - 1}) {
        CHECK(cudaMemcpy(hx.data(), x + (size_t)r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hy.data(), y + (size_t)r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hw.data(), w, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hb.data(), b, cols * sizeof(T), cudaMemcpyDeviceToHost));
        auto f = [](T v) { return (double)(float)v; };
        double m = -INFINITY, s = 0, q = 0;
        for (int i = 0; i < cols; ++i) m = std::max(m, f(hx[i]));
        for (int i = 0; i < cols; ++i) s += f(hx[i]), q += f(hx[i]) * f(hx[i]);
        double mean = s / cols, var = 0, es = 0;
        for (int i = 0; i < cols; ++i)
            var += (f(hx[i]) - mean) * (f(hx[i]) - mean), es += std::exp(f(hx[i]) - m);
        var /= cols;
        for (int i = 0; i < cols; ++i) {
            double ref = OP == SOFTMAX ? std::exp(f(hx[i]) - m) / es
                         : OP == RMS   ? f(hx[i]) / std::sqrt(q / cols + eps) * f(hw[i])
                                       : (f(hx[i]) - mean) / std::sqrt(var + eps) * f(hw[i]) + f(hb[i]);
            double scale = OP == SOFTMAX ? 1.0 / cols : 1.0;
            err = std::max(err, std::fabs(f(hy[i]) - ref) / (std::fabs(ref) + scale));
        }
    }
    const char* on[] = {"softmax", "rmsnorm", "layernorm"};
    std::printf("%-9s %4s %6dx%-5d mode=%d blocks=%-6d  %7.1f us  [%.1f..%.1f]  %.3f x copy  relerr %.1e\n",
                on[OP], tname, rows, cols, MODE, blocks, med, us.front(), us.back(), xc, err);
    std::fflush(stdout);
}

template <typename T, int OP, int L>
void modes(int rows, int cols, int reps, double copy_us, T* x, T* w, T* b, T* y, const char* tn) {
    run<T, OP, L, 0>(rows, cols, 0, reps, copy_us, x, w, b, y, tn);
    run<T, OP, L, 1>(rows, cols, 0, reps, copy_us, x, w, b, y, tn);
    run<T, OP, L, 2>(rows, cols, 0, reps, copy_us, x, w, b, y, tn);
    run<T, OP, L, 2>(rows, cols, 16, reps, copy_us, x, w, b, y, tn);
    run<T, OP, L, 0>(rows, cols, 0, reps, copy_us, x, w, b, y, tn);
}

template <typename T, int L>
void shape(int rows, int cols, const char* tname, int reps) {
    size_t n = (size_t)rows * cols;
    T *x, *y, *w, *b;
    CHECK(cudaMalloc(&x, n * sizeof(T)));
    CHECK(cudaMalloc(&y, n * sizeof(T)));
    CHECK(cudaMalloc(&w, cols * sizeof(T)));
    CHECK(cudaMalloc(&b, cols * sizeof(T)));
    {
        std::mt19937 g(1);
        std::normal_distribution<float> d(0.5f, 2.f);
        std::vector<T> h(n);
        for (auto& v : h) v = (T)d(g);
        CHECK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        std::vector<T> hw(cols), hb(cols);
        for (auto& v : hw) v = (T)(1.f + 0.1f * d(g));
        for (auto& v : hb) v = (T)(0.1f * d(g));
        CHECK(cudaMemcpy(w, hw.data(), cols * sizeof(T), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b, hb.data(), cols * sizeof(T), cudaMemcpyHostToDevice));
    }
    auto cus = time_launches([&] { CHECK(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice)); },
                             y, n * sizeof(T), 0xff, reps);
    double copy_us = median(cus);
    std::printf("copy %s %dx%d: %.1f us (%.0f GB/s)\n", tname, rows, cols, copy_us,
                2.0 * n * sizeof(T) / copy_us / 1e3);
    modes<T, SOFTMAX, L>(rows, cols, reps, copy_us, x, w, b, y, tname);
    modes<T, RMS, L>(rows, cols, reps, copy_us, x, w, b, y, tname);
    modes<T, LN, L>(rows, cols, reps, copy_us, x, w, b, y, tname);
    cudaFree(x); cudaFree(y); cudaFree(w); cudaFree(b);
}

int main() {
    shape<float, 4>(65536, 512, "f32", 30);
    shape<__nv_bfloat16, 2>(65536, 512, "bf16", 30);
    shape<float, 8>(32768, 1024, "f32", 30);
    shape<__nv_bfloat16, 4>(32768, 1024, "bf16", 30);
}
