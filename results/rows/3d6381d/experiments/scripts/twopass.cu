// Prototype: row ops in two passes over the row, the second from the L2. A cluster of C blocks
// splits each row; each block loops over its share in strips of U vectors a thread (pass 1:
// statistic; merge through DSMEM; pass 2: output). Persistent (clusters walk rows) or not.
#include <cooperative_groups.h>
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

namespace cg = cooperative_groups;
enum { SOFTMAX = 0, RMS = 1, LN = 2 };

__device__ __forceinline__ uint64_t policy(int p) {
    uint64_t q;
    if (p == 1)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(q));
    else if (p == 2)
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(q));
    else
        asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(q));
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

struct St {
    float a, b, c;  // softmax: max, sum; rms: sumsq; ln: n, mean, m2
};
template <int OP> __device__ __forceinline__ St merge(St s, St o) {
    if (OP == SOFTMAX) {
        float m = fmaxf(s.a, o.a);
        float sa = s.a == -INFINITY ? 0.f : s.b * __expf(s.a - m);
        float sb = o.a == -INFINITY ? 0.f : o.b * __expf(o.a - m);
        return {m, sa + sb, 0};
    } else if (OP == RMS) {
        return {s.a + o.a, 0, 0};
    } else {
        float n = s.a + o.a;
        float d = o.b - s.b;
        float f = o.a * __frcp_rn(fmaxf(n, 1.f));
        return {n, s.b + d * f, s.c + o.c + d * d * s.a * f};
    }
}
template <int OP> __device__ __forceinline__ St empty() {
    return OP == SOFTMAX ? St{-INFINITY, 0, 0} : St{0, 0, 0};
}
template <int OP> __device__ __forceinline__ St shfl(St s, int m) {
    return {__shfl_xor_sync(~0u, s.a, m), __shfl_xor_sync(~0u, s.b, m),
            __shfl_xor_sync(~0u, s.c, m)};
}

template <typename T, int OP, int THREADS, int U1, int U2>
__global__ void __launch_bounds__(THREADS, THREADS == 256 ? 4 : 1024 / THREADS) twopass(const T* x, const T* w, const T* b, T* y,
                                                   int rows, int cols, float eps, int C, int p1,
                                                   int p2) {
    using E = El<T>;
    constexpr int N = E::N;
    cg::cluster_group cl = cg::this_cluster();
    const int rank = C > 1 ? cl.block_rank() : 0;
    const int cid = blockIdx.x / C, nclusters = gridDim.x / C;
    __shared__ St red[THREADS / 32];
    __shared__ St slots[2][16];
    const int per_block = cols / N / C;
    const uint64_t q1 = policy(p1), q2 = policy(p2), qw = policy(1);
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int it = 0;
    for (int row = cid; row < rows; row += nclusters, ++it) {
        const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)row * cols) + rank * per_block;
        uint4* yr = reinterpret_cast<uint4*>(y + (size_t)row * cols) + rank * per_block;
        St s = empty<OP>();
        for (int v0 = t; v0 < per_block; v0 += THREADS * U1) {
            uint4 h[U1];
#pragma unroll
            for (int j = 0; j < U1; ++j) {
                int v = v0 + j * THREADS;
                h[j] = ld(xr + min(v, per_block - 1), q1);
            }
            St l;
            if (OP == SOFTMAX) {
                float m = -INFINITY;
#pragma unroll
                for (int j = 0; j < U1; ++j)
                    if (v0 + j * THREADS < per_block)
#pragma unroll
                        for (int k = 0; k < N; ++k) m = fmaxf(m, E::get(h[j], k));
                float sum = 0;
#pragma unroll
                for (int j = 0; j < U1; ++j)
                    if (v0 + j * THREADS < per_block)
#pragma unroll
                        for (int k = 0; k < N; ++k) sum += __expf(E::get(h[j], k) - m);
                l = {m, sum, 0};
            } else if (OP == RMS) {
                float q = 0;
#pragma unroll
                for (int j = 0; j < U1; ++j)
                    if (v0 + j * THREADS < per_block)
#pragma unroll
                        for (int k = 0; k < N; ++k) q += E::get(h[j], k) * E::get(h[j], k);
                l = {q, 0, 0};
            } else {
                float sum = 0;
                int cnt = 0;
#pragma unroll
                for (int j = 0; j < U1; ++j)
                    if (v0 + j * THREADS < per_block) {
                        cnt += N;
#pragma unroll
                        for (int k = 0; k < N; ++k) sum += E::get(h[j], k);
                    }
                float n = (float)cnt, mean = sum / n, m2 = 0;
#pragma unroll
                for (int j = 0; j < U1; ++j)
                    if (v0 + j * THREADS < per_block)
#pragma unroll
                        for (int k = 0; k < N; ++k) {
                            float d = E::get(h[j], k) - mean;
                            m2 += d * d;
                        }
                l = {n, mean, m2};
            }
            s = merge<OP>(s, l);
        }
        for (int m = 16; m; m /= 2) s = merge<OP>(s, shfl<OP>(s, m));
        if (lane == 0) red[warp] = s;
        __syncthreads();
        if (warp == 0) {
            s = lane < THREADS / 32 ? red[lane] : empty<OP>();
            for (int m = 16; m; m /= 2) s = merge<OP>(s, shfl<OP>(s, m));
            if (lane < C) {
                St* dst = C > 1 ? cl.map_shared_rank(&slots[it & 1][rank], lane)
                                : &slots[it & 1][0];
                *dst = s;
            }
        }
        if (C > 1)
            cl.sync();
        else
            __syncthreads();
        s = slots[it & 1][0];
        for (int r = 1; r < C; ++r) s = merge<OP>(s, slots[it & 1][r]);
        float A, B;
        if (OP == SOFTMAX) {
            A = s.a;
            B = 1.f / s.b;
        } else if (OP == RMS) {
            A = rsqrtf(s.a / cols + eps);
            B = 0;
        } else {
            A = s.b;
            B = rsqrtf(s.c / cols + eps);
        }
        const uint4* wr = reinterpret_cast<const uint4*>(w) + rank * per_block;
        const uint4* br = reinterpret_cast<const uint4*>(b) + rank * per_block;
        for (int v0 = t; v0 < per_block; v0 += THREADS * U2) {
            uint4 h[U2], wv[U2], bv[U2];
#pragma unroll
            for (int j = 0; j < U2; ++j) {
                int v = min(v0 + j * THREADS, per_block - 1);
                h[j] = ld(xr + v, q2);
                if (OP != SOFTMAX) wv[j] = ld(wr + v, qw);
                if (OP == LN) bv[j] = ld(br + v, qw);
            }
#pragma unroll
            for (int j = 0; j < U2; ++j) {
                int v = v0 + j * THREADS;
                if (v < per_block) {
                    float o[N];
#pragma unroll
                    for (int k = 0; k < N; ++k) {
                        float xv = E::get(h[j], k);
                        if (OP == SOFTMAX)
                            o[k] = __expf(xv - A) * B;
                        else if (OP == RMS)
                            o[k] = xv * A * E::get(wv[j], k);
                        else
                            o[k] = (xv - A) * B * E::get(wv[j], k) + E::get(bv[j], k);
                    }
                    yr[v] = E::pack(o);
                }
            }
        }
    }
    if (C > 1) cl.sync();  // no block leaves while another may still write its slots
}

template <typename T, int OP, int THREADS>
void run(int rows, int cols, int C, bool persistent, int p1, int p2, int reps, double copy_us,
         T* x, T* w, T* b, T* y, const char* tname) {
    auto k = twopass<T, OP, THREADS, (THREADS == 1024 || sizeof(T) == 2) ? 4 : 8, OP == LN ? (THREADS == 1024 ? 2 : 3) : 4>;
    if (C > 8) CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(THREADS);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = rows;
    cfg.gridDim = dim3(rows * C);
    if (persistent) {
        int active = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&active, k, &cfg));
        clusters = std::min(rows, active);
        cfg.gridDim = dim3(clusters * C);
    }
    float eps = OP == LN ? 1e-5f : 1e-6f;
    auto launch = [&] { CHECK(cudaLaunchKernelEx(&cfg, k, x, w, b, y, rows, cols, eps, C, p1, p2)); };
    size_t bytes = (size_t)rows * cols * sizeof(T);
    auto us = time_launches(launch, y, bytes, 0xff, reps);
    double med = median(us);
    std::sort(us.begin(), us.end());
    int weights = OP == SOFTMAX ? 0 : OP == RMS ? 1 : 2;
    double kb = (2.0 * rows + weights) * cols * sizeof(T);
    double xc = (kb / med) / (2.0 * bytes / copy_us);
    // correctness of row 0 and the last row
    std::vector<T> hx(cols), hy(cols), hw(cols), hb(cols);
    double err = 0;
    for (int r : {0, rows - 1}) {
        CHECK(cudaMemcpy(hx.data(), x + (size_t)r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hy.data(), y + (size_t)r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hw.data(), w, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hb.data(), b, cols * sizeof(T), cudaMemcpyDeviceToHost));
        auto f = [](T v) { return (double)(float)v; };
        double m = -INFINITY, s = 0, q = 0;
        for (int i = 0; i < cols; ++i) m = std::max(m, f(hx[i]));
        for (int i = 0; i < cols; ++i) s += f(hx[i]), q += f(hx[i]) * f(hx[i]);
        double mean = s / cols, var = 0, es = 0;
        for (int i = 0; i < cols; ++i) var += (f(hx[i]) - mean) * (f(hx[i]) - mean), es += std::exp(f(hx[i]) - m);
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
    const char* pn[] = {"normal", "last", "first"};
    std::printf("%-9s %4s %6dx%-7d C=%-2d T=%-4d %s p1=%-6s p2=%-6s clusters=%-4d  %8.1f us  [%.1f..%.1f]  %.3f x copy  relerr %.1e\n",
                on[OP], tname, rows, cols, C, THREADS, persistent ? "walk" : "grid", pn[p1], pn[p2],
                clusters, med, us.front(), us.back(), xc, err);
    std::fflush(stdout);
}

template <typename T>
void shape(int op, int rows, int cols, const char* tname, const std::vector<std::string>& cfgs, int reps) {
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
    std::printf("copy %s %dx%d: %.1f us (%.0f GB/s)\n", tname, rows, cols, copy_us, 2.0 * n * sizeof(T) / copy_us / 1e3);
    for (auto& c : cfgs) {
        int C, T_, pers, p1, p2;
        std::sscanf(c.c_str(), "%d,%d,%d,%d,%d", &C, &T_, &pers, &p1, &p2);
        if (cols / El<T>::N % C) continue;
#define GO(OPV, TH) run<T, OPV, TH>(rows, cols, C, pers, p1, p2, reps, copy_us, x, w, b, y, tname)
        if (op == SOFTMAX) { if (T_ == 1024) GO(SOFTMAX, 1024); else if (T_ == 256) GO(SOFTMAX, 256); else GO(SOFTMAX, 512); }
        if (op == RMS) { if (T_ == 1024) GO(RMS, 1024); else if (T_ == 256) GO(RMS, 256); else GO(RMS, 512); }
        if (op == LN) { if (T_ == 1024) GO(LN, 1024); else if (T_ == 256) GO(LN, 256); else GO(LN, 512); }
    }
    cudaFree(x); cudaFree(y); cudaFree(w); cudaFree(b);
}

// usage: twopass OP DTYPE ROWS COLS CFG... (CFG = C,THREADS,persistent,p1,p2; p: 0 normal 1 last 2 first)
int main(int argc, char** argv) {
    int op = !std::strcmp(argv[1], "softmax") ? SOFTMAX : !std::strcmp(argv[1], "rmsnorm") ? RMS : LN;
    bool bf = !std::strcmp(argv[2], "bf16");
    int rows = std::atoi(argv[3]), cols = std::atoi(argv[4]);
    std::vector<std::string> cfgs(argv + 5, argv + argc);
    if (bf) shape<__nv_bfloat16>(op, rows, cols, "bf16", cfgs, 20);
    else shape<float>(op, rows, cols, "f32", cfgs, 20);
}
