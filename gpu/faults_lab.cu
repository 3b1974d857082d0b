// The microscope's fault catalogue planted in plain CUDA C++, each fault beside its fixed twin
// (one thing changed), for calibrating the diagnosis on counters from a program the lab did not
// build. Each kernel is timed with CUDA events (median of `reps` after 3 warm-ups), then
// launched once more between cudaProfilerStart and cudaProfilerStop, so
//
//   ncu --profile-from-start off --set full … faults_lab [reps=20] [only]
//
// profiles exactly one launch of each. CSV on stdout: kernel,median_us,min_us,max_us,check
// (`check` is ok or what was wrong with the output).
//
//   gemm_fp32 / gemm_bf16        4096³ GEMM on the FMA pipe vs BF16 WMMA on the tensor cores
//   strided_32 / strided_1       out[i] = in[i * stride]
//   regs_hog / regs_lean         128 weights live across a dependent-load chain vs loaded after
//   bank_column / bank_padded    column reads of a 32x32 shared tile, unpadded vs padded
//   tail_1p15 / tail_waves       1.15 waves of long blocks vs the same work in 8 waves
//   small_grid / full_grid       16 blocks vs 1056 doing the same total work
//   diverge_lane / diverge_warp  a branch on lane parity vs on warp parity, same work
//   spill_local / spill_regs     a dynamically indexed per-thread array vs unrolled registers
//   axpy                         out = a x + y (healthy: at the DRAM roof, nothing to tune)
//   async_1 / async_4            cp.async into shared memory, one stage vs four
//   sfu_sin / sfu_poly           __sinf per element vs an FMA polynomial
//   l2_small / l2_big            a 16 MiB window re-read 16 times vs a 1 GiB stream read once
//   barrier_tree / barrier_shfl  a shared-memory tree per 8 elements vs warp shuffles
#include <cuda_bf16.h>
#include <cuda_pipeline.h>
#include <cuda_profiler_api.h>
#include <mma.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "measure.cuh"

using namespace nvcuda;

// ---- GEMM: C = A B, row-major, N = 4096 ----
constexpr int GN = 4096;

// 128x128 tile per 256-thread block, 8x8 outputs per thread (rows ty + 16 i, columns
// tx + 16 j: conflict-free shared reads), K-step 8 through shared memory (A's tile padded so its
// transposing store is conflict-free too).
__global__ void __launch_bounds__(256) gemm_fp32(const float* A, const float* B, float* C) {
    __shared__ float As[8][132];
    __shared__ float Bs[8][128];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
    float acc[8][8] = {};
    for (int k0 = 0; k0 < GN; k0 += 8) {
        for (int i = threadIdx.x; i < 8 * 128; i += 256) {
            As[i % 8][i / 8] = A[(size_t)(row0 + i / 8) * GN + k0 + i % 8];
            Bs[i / 128][i % 128] = B[(size_t)(k0 + i / 128) * GN + col0 + i % 128];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 8; ++kk) {
            float a[8], b[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 8; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
            C[(size_t)(row0 + ty + 16 * i) * GN + col0 + tx + 16 * j] = acc[i][j];
}

// The same product with BF16 inputs on the tensor cores: each warp a 32x32 tile of C
// (2x2 WMMA 16x16x16 fragments), 8 warps a 64x128 block tile, fragments loaded from global.
__global__ void __launch_bounds__(256) gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                                 float* C) {
    int warp = threadIdx.x / 32;
    int row0 = blockIdx.y * 64 + (warp / 4) * 32, col0 = blockIdx.x * 128 + (warp % 4) * 32;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k = 0; k < GN; k += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[2];
        for (int i = 0; i < 2; ++i)
            wmma::load_matrix_sync(a[i], A + (size_t)(row0 + 16 * i) * GN + k, GN);
        for (int j = 0; j < 2; ++j)
            wmma::load_matrix_sync(b[j], B + (size_t)k * GN + col0 + 16 * j, GN);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(C + (size_t)(row0 + 16 * i) * GN + col0 + 16 * j, acc[i][j],
                                    GN, wmma::mem_row_major);
}

// ---- Strided copy: n outputs ----
__global__ void strided(const float* in, float* out, size_t n, int stride) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * stride];
}

// ---- Registers: each thread loads W weights, follows a chain of CHASE dependent loads through
// an index array (latency-bound: one load in flight per warp), then weighs its end point.
// The hog loads the weights first, so all W stay live across the chain (registers cap the
// resident warps); the lean twin loads them after it (the same sum). ----
constexpr int W = 128, CHASE = 64;
template <bool HOG>
__global__ void regs(const float* in, const unsigned* idx, float* out, size_t n) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    float w[W];
    unsigned j;
    if (HOG) {
#pragma unroll
        for (int k = 0; k < W; ++k) w[k] = in[t + k * threads];
        j = (unsigned)(fabsf(w[0]) * 1e6f) % n;
    } else {
        j = (unsigned)(fabsf(in[t]) * 1e6f) % n;
    }
    for (int c = 0; c < CHASE; ++c) j = idx[j];
    if (!HOG) {
#pragma unroll
        for (int k = 0; k < W; ++k) w[k] = in[t + k * threads];
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < W; ++k) s += w[k] * (float)((j + k) & 255);
    out[t] = s;
}

// ---- Bank conflicts: each warp fills a 32x32 tile row by row, then every lane sums a column,
// REPS times; PITCH 32 puts a column in one bank, 33 spreads it over all 32. ----
template <int PITCH>
__global__ void bank(const float* in, float* out) {
    __shared__ float tile[8][32 * PITCH];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float* t = tile[warp];
    size_t base = ((size_t)blockIdx.x * 8 + warp) * 1024;
    for (int r = 0; r < 32; ++r) t[r * PITCH + lane] = in[base + r * 32 + lane];
    __syncwarp();
    float s = 0;
    for (int rep = 0; rep < 64; ++rep)
#pragma unroll 8
        for (int r = 0; r < 32; ++r) s += t[lane * PITCH + ((r + rep) & 31)];
    out[(size_t)blockIdx.x * 256 + threadIdx.x] = s;
}

// ---- Long blocks: each block WORK dependent FMAs per thread (compute, no memory). ----
__global__ void spin(float* out, int work) {
    float a = threadIdx.x * 1e-3f, b = 1.0001f;
    for (int k = 0; k < work; ++k) a = fmaf(a, b, 1e-7f);
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = a;
}

// ---- Divergence: half the lanes (or half the warps) run path A, the others path B. ----
template <bool BY_LANE>
__global__ void diverge(float* out, int work) {
    unsigned who = BY_LANE ? threadIdx.x % 2 : (threadIdx.x / 32) % 2;
    float a = threadIdx.x * 1e-3f;
    if (who == 0) {
        for (int k = 0; k < work; ++k) a = fmaf(a, 1.0001f, 1e-7f);
    } else {
        for (int k = 0; k < work; ++k) a = fmaf(a, 0.9999f, 2e-7f);
    }
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = a;
}

// ---- Spills: a 32-entry histogram per thread, indexed by data (local memory) vs by an
// unrolled compare-select over registers. ----
__global__ void spill_local(const unsigned* in, unsigned* out, size_t n) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    unsigned h[32] = {};
    for (size_t i = t; i < n; i += threads) h[in[i] & 31] += 1;
    unsigned s = 0;
    for (int k = 0; k < 32; ++k) s += h[k] * (k + 1);
    out[t] = s;
}
__global__ void spill_regs(const unsigned* in, unsigned* out, size_t n) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    unsigned s = 0;
    for (size_t i = t; i < n; i += threads) s += (in[i] & 31) + 1;
    out[t] = s;
}

// ---- Elementwise at the DRAM roof: out = a x + y (16-byte accesses). ----
__global__ void axpy(const float4* x, const float4* y, float4* out, size_t n4, float a) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 u = x[i], v = y[i];
        out[i] = make_float4(fmaf(a, u.x, v.x), fmaf(a, u.y, v.y), fmaf(a, u.z, v.z),
                           fmaf(a, u.w, v.w));
    }
}

// ---- cp.async: a block streams tiles of 256 float4 into shared memory and sums them, with
// STAGES tiles in flight. ----
template <int STAGES>
__global__ void async_sum(const float4* in, float* out, size_t tiles_per_block) {
    __shared__ float4 buf[STAGES][256];
    size_t base = (size_t)blockIdx.x * tiles_per_block * 256;
    float s = 0;
    for (int st = 0; st < STAGES - 1 && st < (int)tiles_per_block; ++st) {
        __pipeline_memcpy_async(&buf[st][threadIdx.x], &in[base + st * 256 + threadIdx.x], 16);
        __pipeline_commit();
    }
    for (size_t t = 0; t < tiles_per_block; ++t) {
        size_t next = t + STAGES - 1;
        if (next < tiles_per_block)
            __pipeline_memcpy_async(&buf[next % STAGES][threadIdx.x],
                                    &in[base + next * 256 + threadIdx.x], 16);
        __pipeline_commit();
        __pipeline_wait_prior(STAGES - 1);
        float4 v = buf[t % STAGES][threadIdx.x];
        s += v.x + v.y + v.z + v.w;
    }
    out[(size_t)blockIdx.x * 256 + threadIdx.x] = s;
}

// ---- Special functions: 32 sines per element vs the same count of a degree-7 polynomial. ----
template <bool SFU>
__global__ void sfu(const float* in, float* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i], s = 0;
#pragma unroll 4
    for (int k = 0; k < 32; ++k) {
        float y = x + k * 0.01f;
        if (SFU) {
            s += __sinf(y);
        } else {
            float y2 = y * y;
            s += y * fmaf(y2, fmaf(y2, fmaf(y2, -1.984e-4f, 8.333e-3f), -0.16667f), 1.0f);
        }
    }
    out[i] = s;
}

// ---- L2: every thread reads REPEAT float4s of a window of `window4` float4s. ----
__global__ void l2_read(const float4* in, float* out, size_t window4, int repeat) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    float s = 0;
    for (int r = 0; r < repeat; ++r) {
        float4 v = in[(t + r * threads) % window4];
        s += v.x + v.y + v.z + v.w;
    }
    out[t] = s;
}

// ---- Barriers: each 256-thread block sums 8 elements per thread per round, ROUNDS rounds,
// with a full shared-memory tree (8 barriers) or warp shuffles (one barrier) per round. ----
template <bool TREE>
__global__ void barrier_sum(const float* in, float* out, int rounds) {
    __shared__ float s[256];
    float total = 0;
    size_t base = (size_t)blockIdx.x * rounds * 256;
    for (int r = 0; r < rounds; ++r) {
        float v = in[base + (size_t)r * 256 + threadIdx.x];
        if (TREE) {
            s[threadIdx.x] = v;
            __syncthreads();
            for (int stride = 128; stride > 0; stride >>= 1) {
                if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
                __syncthreads();
            }
            total += s[0];
            __syncthreads();
        } else {
            for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
            if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;
            __syncthreads();
            if (threadIdx.x < 32) {
                float w = threadIdx.x < 8 ? s[threadIdx.x] : 0;
                for (int o = 4; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffff, w, o);
                if (threadIdx.x == 0) total += w;
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// ---------------------------------------------------------------------------------------------

static std::vector<float> host_random(size_t n, unsigned seed) {
    std::vector<float> h(n);
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        h[i] = (float)((x >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return h;
}

template <typename T>
static T* device_copy(const std::vector<T>& h) {
    T* d;
    CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

static std::string only;
static int reps = 20;

// Times `launch` (output `out` of `bytes` poisoned before each), profiles one more launch, and
// prints the CSV row with `check()`'s verdict on the profiled launch's output.
template <typename L, typename C>
static void run(const char* name, L launch, void* out, size_t bytes, C check) {
    if (!only.empty() && only.find(name) == std::string::npos) return;
    std::vector<double> us = time_launches(launch, out, bytes, 0xff, reps);
    CHECK(cudaMemset(out, 0xff, bytes));
    CHECK(cudaProfilerStart());
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaProfilerStop());
    std::string verdict = check();
    std::printf("%s,%.2f,%.2f,%.2f,%s\n", name, median(us),
                *std::min_element(us.begin(), us.end()), *std::max_element(us.begin(), us.end()),
                verdict.c_str());
    std::fflush(stdout);
}

template <typename T>
static std::vector<T> back(const T* d, size_t n) {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

static std::string near(double got, double want, double tol) {
    if (std::isfinite(got) && std::fabs(got - want) <= tol * (1 + std::fabs(want))) return "ok";
    char b[96];
    std::snprintf(b, sizeof b, "got %.6g want %.6g", got, want);
    return b;
}

int main(int argc, char** argv) {
    if (argc > 1) reps = std::atoi(argv[1]);
    if (argc > 2) only = argv[2];
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::printf("kernel,median_us,min_us,max_us,check\n");

    const size_t BIG = size_t(1) << 28;  // 1 GiB of floats
    std::vector<float> h = host_random(BIG, 1);
    float* in = device_copy(h);
    float* out;
    CHECK(cudaMalloc(&out, BIG * sizeof(float)));

    {  // GEMMs: check C[r][c] for a few (r, c) against an f64 dot product.
        size_t nn = (size_t)GN * GN;
        std::vector<float> ha = host_random(nn, 2), hb = host_random(nn, 3);
        std::vector<__nv_bfloat16> a16(nn), b16(nn);
        for (size_t i = 0; i < nn; ++i) {
            a16[i] = __float2bfloat16(ha[i]);
            b16[i] = __float2bfloat16(hb[i]);
        }
        float *A = device_copy(ha), *B = device_copy(hb), *C;
        __nv_bfloat16 *A16 = device_copy(a16), *B16 = device_copy(b16);
        CHECK(cudaMalloc(&C, nn * sizeof(float)));
        auto check = [&](bool bf16) {
            std::vector<float> c = back(C, nn);
            for (int s = 0; s < 8; ++s) {
                int r = (s * 977) % GN, col = (s * 1531 + 7) % GN;
                double want = 0;
                for (int k = 0; k < GN; ++k) {
                    double x = bf16 ? (double)__bfloat162float(a16[(size_t)r * GN + k])
                                    : ha[(size_t)r * GN + k];
                    double y = bf16 ? (double)__bfloat162float(b16[(size_t)k * GN + col])
                                    : hb[(size_t)k * GN + col];
                    want += x * y;
                }
                std::string v = near(c[(size_t)r * GN + col], want, 1e-3);
                if (v != "ok") return v;
            }
            return std::string("ok");
        };
        run("gemm_fp32", [&] { gemm_fp32<<<dim3(GN / 128, GN / 128), 256>>>(A, B, C); }, C,
            nn * 4, [&] { return check(false); });
        run("gemm_bf16", [&] { gemm_bf16<<<dim3(GN / 128, GN / 64), 256>>>(A16, B16, C); }, C,
            nn * 4, [&] { return check(true); });
        CHECK(cudaFree(A));
        CHECK(cudaFree(B));
        CHECK(cudaFree(C));
        CHECK(cudaFree(A16));
        CHECK(cudaFree(B16));
    }
    {  // Strided copies: 2^23 outputs (reading 1 GiB at stride 32).
        size_t n = BIG / 32;
        for (int stride : {32, 1}) {
            std::string name = "strided_" + std::to_string(stride);
            run(name.c_str(), [&] { strided<<<n / 256, 256>>>(in, out, n, stride); }, out, n * 4,
                [&] {
                    std::vector<float> o = back(out, n);
                    for (size_t i = 0; i < n; i += 4099)
                        if (o[i] != h[i * stride]) return std::string("mismatch");
                    return std::string("ok");
                });
        }
    }
    {  // Registers: 2^20 threads, chains through a random index array of 2^26 words.
        size_t n = size_t(1) << 26, threads = size_t(1) << 20;
        std::vector<unsigned> hi(n);
        unsigned x = 7;
        for (size_t i = 0; i < n; ++i) {
            x = x * 1664525u + 1013904223u;
            hi[i] = x % n;
        }
        unsigned* idx = device_copy(hi);
        auto check = [&] {
            std::vector<float> o = back(out, threads);
            for (size_t t = 0; t < threads; t += 65537) {
                unsigned j = (unsigned)(std::fabs(h[t]) * 1e6f) % n;
                for (int c = 0; c < CHASE; ++c) j = hi[j];
                double s = 0;
                for (int k = 0; k < W; ++k) s += (double)h[t + k * threads] * ((j + k) & 255);
                std::string v = near(o[t], s, 1e-4);
                if (v != "ok") return v;
            }
            return std::string("ok");
        };
        run("regs_hog", [&] { regs<true><<<threads / 256, 256>>>(in, idx, out, n); }, out,
            threads * 4, check);
        run("regs_lean", [&] { regs<false><<<threads / 256, 256>>>(in, idx, out, n); }, out,
            threads * 4, check);
        CHECK(cudaFree(idx));
    }
    {  // Bank conflicts: 8192 blocks of 8 warps, each warp one 32x32 tile.
        int blocks = 8192;
        auto check = [&] {
            std::vector<float> o = back(out, (size_t)blocks * 256);
            for (int b = 0; b < blocks; b += 997) {
                int warp = 3, lane = 5;
                size_t base = ((size_t)b * 8 + warp) * 1024;
                double s = 0;
                for (int r = 0; r < 32; ++r) s += 64.0 * h[base + (size_t)lane * 32 + r];
                std::string v = near(o[(size_t)b * 256 + warp * 32 + lane], s, 1e-4);
                if (v != "ok") return v;
            }
            return std::string("ok");
        };
        run("bank_column", [&] { bank<32><<<blocks, 256>>>(in, out); }, out,
            (size_t)blocks * 1024, check);
        run("bank_padded", [&] { bank<33><<<blocks, 256>>>(in, out); }, out,
            (size_t)blocks * 1024, check);
    }
    auto spin_want = [](unsigned tid, int work, float b, float c) {
        float a = tid * 1e-3f;
        for (int k = 0; k < work; ++k) a = fmaf(a, b, c);
        return a;
    };
    {  // Tail: 1.15 waves of 8 blocks/SM vs 8x as many blocks of 1/8 the work; the same FMAs.
        int per_sm = 8, work = 1 << 16;
        int blocks = (int)(sms * per_sm * 1.15);
        auto check = [&](int w) {
            std::vector<float> o = back(out, 256);
            return near(o[17], spin_want(17, w, 1.0001f, 1e-7f), 1e-5);
        };
        run("tail_1p15", [&] { spin<<<blocks, 256>>>(out, work); }, out, (size_t)blocks * 1024,
            [&] { return check(work); });
        run("tail_waves", [&] { spin<<<blocks * 8, 256>>>(out, work / 8); }, out,
            (size_t)blocks * 8 * 1024, [&] { return check(work / 8); });
        // Undersized: 16 blocks vs 1056 blocks of 16/1056 the work each.
        int few = 16, many = sms * 8, w = 1 << 20;
        run("small_grid", [&] { spin<<<few, 256>>>(out, w); }, out, (size_t)few * 1024,
            [&] { return check(w); });
        int w2 = (int)((long long)w * few / many);
        run("full_grid", [&] { spin<<<many, 256>>>(out, w2); }, out, (size_t)many * 1024,
            [&] { return check(w2); });
    }
    {  // Divergence.
        int blocks = sms * 8 * 4, work = 1 << 14;
        auto check = [&](bool by_lane) {
            std::vector<float> o = back(out, 256);
            unsigned t = 33;  // lane 1 of warp 1
            unsigned who = by_lane ? t % 2 : (t / 32) % 2;
            float w = who == 0 ? spin_want(t, work, 1.0001f, 1e-7f)
                               : spin_want(t, work, 0.9999f, 2e-7f);
            return near(o[t], w, 1e-5);
        };
        run("diverge_lane", [&] { diverge<true><<<blocks, 256>>>(out, work); }, out,
            (size_t)blocks * 1024, [&] { return check(true); });
        run("diverge_warp", [&] { diverge<false><<<blocks, 256>>>(out, work); }, out,
            (size_t)blocks * 1024, [&] { return check(false); });
    }
    {  // Spills: a histogram over 2^28 words by 2^20 threads.
        unsigned* words = reinterpret_cast<unsigned*>(in);
        size_t n = BIG, threads = size_t(1) << 20;
        std::vector<unsigned> hw(n);
        std::memcpy(hw.data(), h.data(), n * 4);
        auto check = [&] {
            std::vector<unsigned> o = back(reinterpret_cast<unsigned*>(out), threads);
            for (size_t t = 0; t < threads; t += 104729) {
                unsigned s = 0;
                for (size_t i = t; i < n; i += threads) s += (hw[i] & 31) + 1;
                if (o[t] != s) return std::string("mismatch");
            }
            return std::string("ok");
        };
        run("spill_local", [&] {
            spill_local<<<threads / 256, 256>>>(words, reinterpret_cast<unsigned*>(out), n);
        }, out, threads * 4, check);
        run("spill_regs", [&] {
            spill_regs<<<threads / 256, 256>>>(words, reinterpret_cast<unsigned*>(out), n);
        }, out, threads * 4, check);
    }
    {  // Elementwise: 2^27 floats each of x and y.
        size_t n = BIG / 2, n4 = n / 4;
        const float4* x = reinterpret_cast<const float4*>(in);
        const float4* y = reinterpret_cast<const float4*>(in + n);
        run("axpy", [&] { axpy<<<n4 / 256, 256>>>(x, y, reinterpret_cast<float4*>(out), n4, 2.0f); },
            out, n * 4, [&] {
                std::vector<float> o = back(out, n);
                for (size_t i = 0; i < n; i += 100003) {
                    std::string v = near(o[i], 2.0 * h[i] + h[n + i], 1e-6);
                    if (v != "ok") return v;
                }
                return std::string("ok");
            });
    }
    {  // cp.async: 2^28 floats, 1056 blocks.
        int blocks = sms * 8;
        size_t tiles = BIG / 4 / 256 / blocks;
        const float4* src = reinterpret_cast<const float4*>(in);
        auto check = [&] {
            std::vector<float> o = back(out, (size_t)blocks * 256);
            size_t b = 5, t = 9;
            double s = 0;
            for (size_t k = 0; k < tiles; ++k)
                for (int j = 0; j < 4; ++j) s += h[((b * tiles + k) * 256 + t) * 4 + j];
            return near(o[b * 256 + t], s, 1e-4);
        };
        run("async_1", [&] { async_sum<1><<<blocks, 256>>>(src, out, tiles); }, out,
            (size_t)blocks * 1024, check);
        run("async_4", [&] { async_sum<4><<<blocks, 256>>>(src, out, tiles); }, out,
            (size_t)blocks * 1024, check);
    }
    {  // SFU: 2^26 elements.
        size_t n = size_t(1) << 26;
        auto check = [&](bool use_sfu) {
            std::vector<float> o = back(out, n);
            double s = 0;
            for (int k = 0; k < 32; ++k) s += std::sin((double)h[1234] + k * 0.01);
            return near(o[1234], s, use_sfu ? 1e-3 : 1e-3);
        };
        run("sfu_sin", [&] { sfu<true><<<n / 256, 256>>>(in, out, n); }, out, n * 4,
            [&] { return check(true); });
        run("sfu_poly", [&] { sfu<false><<<n / 256, 256>>>(in, out, n); }, out, n * 4,
            [&] { return check(false); });
    }
    {  // L2: 2^22 threads, 16 float4 each: a 16 MiB window (re-read 16x) vs 1 GiB (read once).
        size_t threads = size_t(1) << 22;
        const float4* src = reinterpret_cast<const float4*>(in);
        for (auto [name, window4] : {std::pair<const char*, size_t>{"l2_small", (16u << 20) / 16},
                                     std::pair<const char*, size_t>{"l2_big", BIG / 4}}) {
            run(name, [&, window4 = window4] {
                l2_read<<<threads / 256, 256>>>(src, out, window4, 16);
            }, out, threads * 4, [&, window4 = window4] {
                std::vector<float> o = back(out, threads);
                size_t t = 4242;
                double s = 0;
                for (int r = 0; r < 16; ++r) {
                    size_t i = (t + r * threads) % window4;
                    for (int j = 0; j < 4; ++j) s += h[i * 4 + j];
                }
                return near(o[t], s, 1e-4);
            });
        }
    }
    {  // Barriers: 2^20 blocks' worth of rounds over 2^28 floats.
        int blocks = sms * 8, rounds = (int)(BIG / 256 / blocks);
        auto check = [&] {
            std::vector<float> o = back(out, blocks);
            size_t b = 3;
            double s = 0;
            for (size_t i = 0; i < (size_t)rounds * 256; ++i) s += h[b * rounds * 256 + i];
            return near(o[b], s, 1e-3);
        };
        run("barrier_tree", [&] { barrier_sum<true><<<blocks, 256>>>(in, out, rounds); }, out,
            (size_t)blocks * 4, check);
        run("barrier_shfl", [&] { barrier_sum<false><<<blocks, 256>>>(in, out, rounds); }, out,
            (size_t)blocks * 4, check);
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return 0;
}
