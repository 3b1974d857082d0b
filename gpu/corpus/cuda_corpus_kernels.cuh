// The kernels of the CUDA C++ corpus (cuda_corpus.cu runs them): one planted fault per kernel
// beside its fixed twin, one change apart, and healthy controls. Their truths, and why, are in
// cuda_corpus.truth.csv and README.md beside this file. The input hashes are host and device
// functions, so the CPU references recompute any input element.
#pragma once

#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

// ---------------------------------------------------------------------------------------------
// Inputs: a counter-based hash of (seed, index), the same on the host and the device, so the
// device fills its buffers and the CPU references recompute any element they need.

__host__ __device__ inline uint64_t splitmix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform in [lo, hi), 24 random bits; fmaf so host and device round alike.
__host__ __device__ inline float uniform(uint32_t seed, uint64_t i, float lo, float hi) {
    float u = (float)(splitmix64(i ^ ((uint64_t)seed << 40)) >> 40) * 0x1p-24f;
    return fmaf(hi - lo, u, lo);
}

// q/64 for an integer q in [-64, 64): exact in BF16, so FP32 and BF16 GEMMs of these inputs
// compute the same exact product.
__host__ __device__ inline float quantized(uint32_t seed, uint64_t i) {
    int q = (int)(splitmix64(i ^ ((uint64_t)seed << 40)) >> 57) - 64;
    return (float)q / 64.0f;
}

// q/8 for an integer q in [-7, 7], mean 0: a sum of these is exact in FP32 while it stays
// under 2^21 in magnitude, and the partial sums of 2^27 of them wander about 6e3 from 0, so an
// atomic sum must equal the f64 sum whatever order its additions took.
__host__ __device__ inline float eighths(uint32_t seed, uint64_t i) {
    int q = (int)(splitmix64(i ^ ((uint64_t)seed << 40)) % 15) - 7;
    return (float)q / 8.0f;
}

__global__ void fill_eighths(float* p, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = eighths(seed, i);
}

__global__ void fill_uniform(float* p, size_t n, uint32_t seed, float lo, float hi) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = uniform(seed, i, lo, hi);
}

__global__ void fill_quantized(float* p, __nv_bfloat16* p16, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = quantized(seed, i);
        p[i] = v;
        p16[i] = __float2bfloat16(v);
    }
}

// The reduction every block-level kernel below ends with: a warp's butterfly, then warp 0
// over the warps' sums. Returns the block's sum in thread 0 (`scratch` holds 32 floats).
__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float block_sum(float v, float* scratch) {
    v = warp_sum(v);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x / 32) ? scratch[lane] : 0.0f;
    if (warp == 0) v = warp_sum(v);
    __syncthreads();  // scratch is free again
    return v;
}

// cp.async (16 bytes, L2 only) and its group commands.
__device__ inline void cp_async16(void* smem, const void* gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---------------------------------------------------------------------------------------------
// a. Waste that does not cost, and waste that does.

// Each thread sums 8 consecutive floats through four 8-byte loads. Every load instruction's 32
// lanes touch 32 sectors and use 8 bytes of each; the next three loads find the same sectors in
// L1, so L2 and DRAM move each byte once.
__global__ void seg8_sum_float2(const float2* __restrict__ in, float* __restrict__ out,
                                size_t segs) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= segs) return;
    const float2* p = in + 4 * t;
    float2 a = p[0], b = p[1], c = p[2], d = p[3];
    out[t] = ((a.x + a.y) + (b.x + b.y)) + ((c.x + c.y) + (d.x + d.y));
}

// The same sums (bit for bit) from fully used sectors: each warp's 256 floats as two 512-byte
// float4 loads, lanes 2i and 2i+1 combining segment i by a shuffle.
__global__ void seg8_sum_coalesced(const float4* __restrict__ in, float* __restrict__ out,
                                   size_t segs) {
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp * 32 >= segs) return;
    const float4* p = in + warp * 64;
    float4 u = p[lane], v = p[32 + lane];
    float su = (u.x + u.y) + (u.z + u.w), sv = (v.x + v.y) + (v.z + v.w);
    float pu = su + __shfl_xor_sync(0xffffffffu, su, 1);
    float pv = sv + __shfl_xor_sync(0xffffffffu, sv, 1);
    if ((lane & 1) == 0) {
        out[warp * 32 + lane / 2] = pu;
        out[warp * 32 + 16 + lane / 2] = pv;
    }
}

// Batch-norm inference on NCHW: y = x * gamma[c] + beta[c]. The 32 lanes of a warp share one
// channel, so each gamma and beta load is one word broadcast to the warp (4 of 32 bytes of a
// sector per load instruction), served by L1; x and y stream at 16 bytes per lane.
constexpr unsigned BN_C = 128, BN_HW = 56 * 56, BN_N = 160;
__global__ void bn_affine_nchw(const float4* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float4* __restrict__ y,
                               unsigned n4) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    unsigned c = (i / (BN_HW / 4)) % BN_C;
    float g = gamma[c], b = beta[c];
    float4 v = x[i];
    y[i] = make_float4(fmaf(v.x, g, b), fmaf(v.y, g, b), fmaf(v.z, g, b), fmaf(v.w, g, b));
}

// One field of an array of 32-byte structs: every lane's 4-byte load is a sector of its own,
// so DRAM moves 8 bytes for each byte used.
struct Particle {
    float x, y, z, vx, vy, vz, mass, charge;
};
__global__ void aos_mass_field(const Particle* __restrict__ p, float* __restrict__ out, size_t n,
                               float scale) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].mass * scale;
}
// The fix: the same field stored as its own array (structure of arrays).
__global__ void soa_mass_field(const float* __restrict__ mass, float* __restrict__ out, size_t n,
                               float scale) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = mass[i] * scale;
}

// ---------------------------------------------------------------------------------------------
// b. GEMMs: C[M][N] = A[M][K] · Bt[N][K]ᵀ, all row-major.

// FP32 through shared memory with little register reuse: 64x32 block tile, K-step 16, each
// thread 4x2 outputs, so every k costs 6 shared loads for 8 FMAs (the LSU, not the FMA pipe,
// sets the pace).
constexpr int SG_BM = 64, SG_BN = 32, SG_BK = 16;
__global__ void __launch_bounds__(256)
    sgemm_smem_4x2(const float* __restrict__ A, const float* __restrict__ Bt, float* __restrict__ C,
                   int M, int N, int K) {
    __shared__ float As[SG_BK][SG_BM + 4];
    __shared__ float Bs[SG_BK][SG_BN + 4];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int m0 = blockIdx.y * SG_BM, n0 = blockIdx.x * SG_BN;
    float acc[4][2] = {};
    for (int k0 = 0; k0 < K; k0 += SG_BK) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            int idx = threadIdx.x + 256 * e, r = idx / SG_BK, c = idx % SG_BK;
            As[c][r] = A[(size_t)(m0 + r) * K + k0 + c];
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            int idx = threadIdx.x + 256 * e, r = idx / SG_BK, c = idx % SG_BK;
            Bs[c][r] = Bt[(size_t)(n0 + r) * K + k0 + c];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < SG_BK; ++kk) {
            float a[4], b[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 2; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            C[(size_t)(m0 + ty + 16 * i) * N + n0 + tx + 16 * j] = acc[i][j];
}

// BF16 on the tensor cores: mma.sync.m16n8k16 fed by ldmatrix from a 3-stage cp.async ring.
// 128x128 block tile, K-step 32, 8 warps of 64x32 (4x4 MMA tiles, 64 accumulators per thread);
// rows padded to 40 elements (80 bytes) so ldmatrix's eight 16-byte rows hit distinct banks.
constexpr int MM_BM = 128, MM_BN = 128, MM_BK = 32, MM_PITCH = 40, MM_STAGES = 3;
constexpr int MM_SMEM = MM_STAGES * (MM_BM + MM_BN) * MM_PITCH * 2;

__device__ inline void ldmatrix_x4(unsigned (&r)[4], const __nv_bfloat16* p) {
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}
__device__ inline void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__global__ void __launch_bounds__(256, 2)
    gemm_bf16_mma(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ Bt,
                  float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __nv_bfloat16* As = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    __nv_bfloat16* Bs = As + MM_STAGES * MM_BM * MM_PITCH;
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int wm = warp / 4, wn = warp % 4;
    int m0 = blockIdx.y * MM_BM, n0 = blockIdx.x * MM_BN;
    auto load_stage = [&](int s, int k0) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            int idx = tid + 256 * e, r = idx / 4, c = (idx % 4) * 8;
            cp_async16(As + (s * MM_BM + r) * MM_PITCH + c, A + (size_t)(m0 + r) * K + k0 + c);
            cp_async16(Bs + (s * MM_BN + r) * MM_PITCH + c, Bt + (size_t)(n0 + r) * K + k0 + c);
        }
    };
    float acc[4][4][4] = {};
    int ktiles = K / MM_BK;
#pragma unroll
    for (int s = 0; s < MM_STAGES - 1; ++s) {
        if (s < ktiles) load_stage(s, s * MM_BK);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<MM_STAGES - 2>();
        __syncthreads();
        int next = kt + MM_STAGES - 1;
        if (next < ktiles) load_stage(next % MM_STAGES, next * MM_BK);
        cp_async_commit();
        const __nv_bfloat16* as = As + (kt % MM_STAGES) * MM_BM * MM_PITCH;
        const __nv_bfloat16* bs = Bs + (kt % MM_STAGES) * MM_BN * MM_PITCH;
#pragma unroll
        for (int kk = 0; kk < MM_BK; kk += 16) {
            unsigned a[4][4], b[2][4];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
                ldmatrix_x4(a[mi],
                            as + (wm * 64 + mi * 16 + lane % 16) * MM_PITCH + kk + (lane / 16) * 8);
#pragma unroll
            for (int nj = 0; nj < 2; ++nj)
                ldmatrix_x4(b[nj], bs +
                                       (wn * 32 + nj * 16 + lane % 8 + (lane / 16) * 8) * MM_PITCH +
                                       kk + ((lane / 8) % 2) * 8);
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    mma_bf16(acc[mi][ni], a[mi], b[ni / 2][(ni % 2) * 2],
                             b[ni / 2][(ni % 2) * 2 + 1]);
        }
    }
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            int row = m0 + wm * 64 + mi * 16 + lane / 4,
                col = n0 + wn * 32 + ni * 8 + (lane % 4) * 2;
            *reinterpret_cast<float2*>(C + (size_t)row * N + col) =
                make_float2(acc[mi][ni][0], acc[mi][ni][1]);
            *reinterpret_cast<float2*>(C + (size_t)(row + 8) * N + col) =
                make_float2(acc[mi][ni][2], acc[mi][ni][3]);
        }
}

// ---------------------------------------------------------------------------------------------
// c. Same-address atomics of four kinds, each beside a twin that makes few of them.

// Each thread's sum of `per_thread` elements, grid-strided (coalesced), eight loads in flight.
__device__ inline float strided_sum(const float* __restrict__ in, size_t per_thread) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t threads = (size_t)gridDim.x * blockDim.x;
    float s = 0;
#pragma unroll 8
    for (size_t k = 0; k < per_thread; ++k) s += in[t + k * threads];
    return s;
}

// Every thread adds its partial sum to one word: one f32 RED per thread (ptxas cannot
// aggregate float adds), all to one L2 slice.
__global__ void red_f32_per_thread(const float* __restrict__ in, float* acc, size_t per_thread) {
    atomicAdd(acc, strided_sum(in, per_thread));
}
// The fix: the block's sum first, one RED per block.
__global__ void red_f32_per_block(const float* __restrict__ in, float* acc, size_t per_thread) {
    __shared__ float scratch[32];
    float s = block_sum(strided_sum(in, per_thread), scratch);
    if (threadIdx.x == 0) atomicAdd(acc, s);
}

// A double accumulator updated by the compare-and-swap loop written before GPUs added doubles
// natively: one 64-bit CAS chain per block on one word, every failed CAS a retry.
__device__ inline void atomic_add_f64_cas(double* addr, double v) {
    unsigned long long* a = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *a, assumed;
    do {
        assumed = old;
        old = atomicCAS(a, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
    } while (old != assumed);
}
__global__ void cas_f64_per_block(const float* __restrict__ in, double* acc, size_t per_thread) {
    __shared__ float scratch[32];
    float s = block_sum(strided_sum(in, per_thread), scratch);
    if (threadIdx.x == 0) atomic_add_f64_cas(acc, (double)s);
}
// The fix: the native f64 atomic add (one RED per block, no retries).
__global__ void red_f64_per_block(const float* __restrict__ in, double* acc, size_t per_thread) {
    __shared__ float scratch[32];
    float s = block_sum(strided_sum(in, per_thread), scratch);
    if (threadIdx.x == 0) atomicAdd(acc, (double)s);
}

// Stream compaction, keep x > 0.5. Each block owns COMPACT_TILE consecutive elements, thread t
// elements t, t + 256, ... Per element a ticket from one counter: ptxas aggregates the warp's
// tickets into one ATOMG (with its return) per warp per element step.
constexpr int COMPACT_PER_THREAD = 16, COMPACT_TILE = 256 * COMPACT_PER_THREAD;
__global__ void __launch_bounds__(256)
    compact_ticket_per_element(const float* __restrict__ in, float* __restrict__ out,
                               unsigned* count) {
    const float* p = in + (size_t)blockIdx.x * COMPACT_TILE + threadIdx.x;
#pragma unroll 4
    for (int k = 0; k < COMPACT_PER_THREAD; ++k) {
        float v = p[k * 256];
        if (v > 0.5f) out[atomicAdd(count, 1u)] = v;
    }
}
// The fix: the block counts and scans its tile first, takes one ticket for all of it, gathers
// its kept values in shared memory in order, and writes them out as one contiguous run.
__global__ void __launch_bounds__(256)
    compact_ticket_per_block(const float* __restrict__ in, float* __restrict__ out,
                             unsigned* count) {
    __shared__ unsigned warp_base[8], block_base, kept_total;
    __shared__ float kept[COMPACT_TILE];
    const float* p = in + (size_t)blockIdx.x * COMPACT_TILE + threadIdx.x;
    float v[COMPACT_PER_THREAD];
    unsigned mine = 0;
#pragma unroll
    for (int k = 0; k < COMPACT_PER_THREAD; ++k) {
        v[k] = p[k * 256];
        mine += v[k] > 0.5f;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned incl = mine;  // inclusive scan of `mine` over the warp
    for (int o = 1; o < 32; o <<= 1) {
        unsigned y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) warp_base[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned run = 0;
        for (int w = 0; w < 8; ++w) {
            unsigned c = warp_base[w];
            warp_base[w] = run;
            run += c;
        }
        kept_total = run;
        block_base = atomicAdd(count, run);
    }
    __syncthreads();
    unsigned pos = warp_base[warp] + incl - mine;
#pragma unroll
    for (int k = 0; k < COMPACT_PER_THREAD; ++k)
        if (v[k] > 0.5f) kept[pos++] = v[k];
    __syncthreads();
    for (unsigned i = threadIdx.x; i < kept_total; i += 256) out[block_base + i] = kept[i];
}

// Sum of squares. Each block owns SUMSQ_TILE consecutive elements; every thread adds its partial
// to the block's shared-memory word: a float atomicAdd in shared memory is a compare-and-swap
// loop (ATOMS.CAST.SPIN), and 512 threads retry on one word.
constexpr int SUMSQ_THREADS = 512, SUMSQ_PER_THREAD = 16,
              SUMSQ_TILE = SUMSQ_THREADS * SUMSQ_PER_THREAD;
__device__ inline float tile_sumsq(const float* __restrict__ in) {
    const float* p = in + (size_t)blockIdx.x * SUMSQ_TILE + threadIdx.x;
    float s = 0;
#pragma unroll
    for (int k = 0; k < SUMSQ_PER_THREAD; ++k) {
        float v = p[k * SUMSQ_THREADS];
        s = fmaf(v, v, s);
    }
    return s;
}
__global__ void __launch_bounds__(SUMSQ_THREADS)
    sumsq_shared_atomic_per_thread(const float* __restrict__ in, float* acc) {
    __shared__ float total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    atomicAdd(&total, tile_sumsq(in));
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(acc, total);
}
// The fix: a warp's butterfly first, one shared atomic per warp.
__global__ void __launch_bounds__(SUMSQ_THREADS)
    sumsq_shared_atomic_per_warp(const float* __restrict__ in, float* acc) {
    __shared__ float total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    float s = warp_sum(tile_sumsq(in));
    if (threadIdx.x % 32 == 0) atomicAdd(&total, s);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(acc, total);
}

// ---------------------------------------------------------------------------------------------
// d. A register cap that does not bind: items of an 8x8 matrix recurrence v <- M v + b, `steps`
// times, then a 160-entry table weighs the result. The table is loaded before the loop and used
// after it, so 64 + 8 + 8 + 160 values are live across the loop: 255 registers and spills
// (ptxas spills the table, which the loop does not touch). The same grid-stride code either way;
// the launch is the difference (128 one-warp blocks vs one warp per item).
constexpr int CHAIN_TAB = 200, CHAIN_ROWS = 64 + 8 + CHAIN_TAB;
__device__ inline void matrix_chain_body(const float* __restrict__ in, float* __restrict__ out,
                                         int items, int steps) {
    for (int item = blockIdx.x * 32 + threadIdx.x; item < items; item += gridDim.x * 32) {
        float m[64], v[8], tab[CHAIN_TAB];
#pragma unroll
        for (int k = 0; k < 64; ++k) m[k] = in[(size_t)k * items + item];
#pragma unroll
        for (int r = 0; r < 8; ++r) v[r] = in[(size_t)(64 + r) * items + item];
#pragma unroll
        for (int k = 0; k < CHAIN_TAB; ++k) tab[k] = in[(size_t)(72 + k) * items + item];
        for (int s = 0; s < steps; ++s) {
            float nv[8];
#pragma unroll
            for (int r = 0; r < 8; ++r) {
                float a = 0.01f;
#pragma unroll
                for (int c = 0; c < 8; ++c) a = fmaf(m[r * 8 + c], v[c], a);
                nv[r] = a;
            }
#pragma unroll
            for (int r = 0; r < 8; ++r) v[r] = nv[r];
        }
        float o = 0;
#pragma unroll
        for (int k = 0; k < CHAIN_TAB; ++k) o = fmaf(tab[k], v[k % 8], o);
        out[item] = o;
    }
}
__global__ void __launch_bounds__(32)
    matrix_chain_few_warps(const float* __restrict__ in, float* __restrict__ out, int items,
                           int steps) {
    matrix_chain_body(in, out, items, steps);
}
__global__ void __launch_bounds__(32)
    matrix_chain_many_warps(const float* __restrict__ in, float* __restrict__ out, int items,
                            int steps) {
    matrix_chain_body(in, out, items, steps);
}
// The experiment that decides many_warps' truth: the same code and launch held to 16 blocks per
// SM (at most 128 registers), so twice the warps per scheduler against more spills.
__global__ void __launch_bounds__(32, 16)
    matrix_chain_16_per_sm(const float* __restrict__ in, float* __restrict__ out, int items,
                           int steps) {
    matrix_chain_body(in, out, items, steps);
}

// ---------------------------------------------------------------------------------------------
// e. Divergence as the cause: each element runs either K steps of a filtered sine (per step one
// __sinf, MUFU.SIN on the XU pipe, and seven FP32 instructions: the XU pipe's 8 cycles per warp
// instruction and the issue slots equally busy) or K dependent FMAs; element e takes the sine
// path when e is odd.
__device__ inline float sine_path(float x, int k) {
    float y = x, s = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma unroll 4
    for (int i = 0; i < k; ++i) {
        float u = __sinf(y);
        y += 1e-3f;
        s += u;
        a1 = fmaf(a1, 0.9f, u);
        a2 = fmaf(a2, 0.5f, a1);
        a3 = fmaf(a3, 0.5f, a2);
    }
    return s + a3;
}
__device__ inline float fma_path(float x, int k) {
    float a = x;
#pragma unroll 4
    for (int i = 0; i < k; ++i) a = fmaf(a, 0.999f, 1e-3f);
    return a;
}
// Thread t computes element t: lanes alternate between the paths, so every warp runs both.
__global__ void diverge_sin_fma_by_lane(const float* __restrict__ in, float* __restrict__ out,
                                        int k) {
    size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[e];
    out[e] = (e & 1) ? sine_path(x, k) : fma_path(x, k);
}
// The fix: the same elements, mapped so each warp holds one parity (warp 2q the even elements of
// a 64-element group, warp 2q+1 the odd ones): each warp runs one path.
__global__ void diverge_sin_fma_by_warp(const float* __restrict__ in, float* __restrict__ out,
                                        int k) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t warp = t / 32, lane = t % 32;
    size_t e = (warp / 2) * 64 + 2 * lane + (warp & 1);
    float x = in[e];
    out[e] = (e & 1) ? sine_path(x, k) : fma_path(x, k);
}

// ---------------------------------------------------------------------------------------------
// f. Bank conflicts: batched 32x32 matrix-vector products y_m = A_m x_m, one warp per matrix,
// the matrix staged in shared memory by rows and read by rows per lane (lane i walks row i, so
// at each step the warp reads one column). Pitch 32 puts a column in one bank (32-way); 33
// spreads it. The walk starts at column `rot` (a run-time argument, 0 here), so the compiler
// cannot merge a lane's reads into 16-byte vectors (with pitch 32 it would: LDS.128, 8-way).
template <int PITCH>
__device__ inline void matvec32_body(const float4* __restrict__ A, const float* __restrict__ x,
                                     float* __restrict__ y, int mats, int rot) {
    __shared__ float tile[8][32 * PITCH];
    __shared__ float xs[8][32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float* t = tile[warp];
    for (int m = blockIdx.x * 8 + warp; m < mats; m += gridDim.x * 8) {
        const float4* a = A + (size_t)m * 256;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            float4 v = a[k * 32 + lane];
            int row = 4 * k + lane / 8, col = 4 * (lane % 8);
            t[row * PITCH + col + 0] = v.x;
            t[row * PITCH + col + 1] = v.y;
            t[row * PITCH + col + 2] = v.z;
            t[row * PITCH + col + 3] = v.w;
        }
        xs[warp][lane] = x[(size_t)m * 32 + lane];
        __syncwarp();
        float acc = 0;
#pragma unroll
        for (int jj = 0; jj < 32; ++jj) {
            int j = (jj + rot) & 31;
            acc = fmaf(t[lane * PITCH + j], xs[warp][j], acc);
        }
        y[(size_t)m * 32 + lane] = acc;
        __syncwarp();
    }
}
__global__ void matvec32_pitch32(const float4* __restrict__ A, const float* __restrict__ x,
                                 float* __restrict__ y, int mats, int rot) {
    matvec32_body<32>(A, x, y, mats, rot);
}
__global__ void matvec32_pitch33(const float4* __restrict__ A, const float* __restrict__ x,
                                 float* __restrict__ y, int mats, int rot) {
    matvec32_body<33>(A, x, y, mats, rot);
}

// ---------------------------------------------------------------------------------------------
// g. The microscope's other faults, in shapes of their own.

// Register-capped occupancy where it binds: each warp walks a linked list of 128-byte nodes
// (the next index in its own array, the payload one float per lane), CHASE_HOPS hops, one node
// in flight per warp, and returns sum_h payload_h z^h. The hog keeps every hop's value and
// evaluates by Horner from the last, so 128 values are live per thread (one 256-thread block
// per SM); the lean twin accumulates as it goes (z^h carried), 8 blocks per SM.
constexpr int CHASE_HOPS = 128;
__global__ void chase_horner_hog(const float* __restrict__ payload, const int* __restrict__ next,
                                 const int* __restrict__ start, float* __restrict__ out, float z) {
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    int j = start[warp];
    float v[CHASE_HOPS];
#pragma unroll
    for (int h = 0; h < CHASE_HOPS; ++h) {
        v[h] = payload[(size_t)j * 32 + lane];
        j = next[j];
    }
    float r = 0;
#pragma unroll
    for (int h = CHASE_HOPS - 1; h >= 0; --h) r = fmaf(r, z, v[h]);
    out[warp * 32 + lane] = r;
}
__global__ void chase_horner_lean(const float* __restrict__ payload, const int* __restrict__ next,
                                  const int* __restrict__ start, float* __restrict__ out, float z) {
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    int j = start[warp];
    float r = 0, p = 1;
#pragma unroll
    for (int h = 0; h < CHASE_HOPS; ++h) {
        r = fmaf(payload[(size_t)j * 32 + lane], p, r);
        p *= z;
        j = next[j];
    }
    out[warp * 32 + lane] = r;
}

// Spills that cost: a 32-tap FIR filter per channel (thread), samples time-major
// x[k][channel], a 32-slot ring of the last samples. With the ring's phase a run-time argument
// (a stream resumed mid-ring) its slots are indexed at run time, so the ring lives in local
// memory: per sample one STL and 32 LDL through L1. With the phase 0 at compile time the
// unrolled loop names every slot and the ring stays in registers.
constexpr int FIR_TAPS = 32;
template <bool RUNTIME_PHASE>
__device__ inline void fir32_body(const float* __restrict__ x, const float* __restrict__ w,
                                  float* __restrict__ y, int channels, int steps, int phase_arg) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= channels) return;
    int phase = RUNTIME_PHASE ? phase_arg : 0;
    float taps[FIR_TAPS], ring[FIR_TAPS];
#pragma unroll
    for (int j = 0; j < FIR_TAPS; ++j) {
        taps[j] = w[j];
        ring[j] = 0;
    }
    for (int k0 = 0; k0 < steps; k0 += FIR_TAPS) {
#pragma unroll
        for (int p = 0; p < FIR_TAPS; ++p) {
            size_t at = (size_t)(k0 + p) * channels + t;
            int slot = (p + phase) & (FIR_TAPS - 1);
            ring[slot] = x[at];
            float acc = 0;
#pragma unroll
            for (int j = 0; j < FIR_TAPS; ++j)
                acc = fmaf(taps[j], ring[(slot - j) & (FIR_TAPS - 1)], acc);
            y[at] = acc;
        }
    }
}
__global__ void fir32_ring_runtime_phase(const float* __restrict__ x, const float* __restrict__ w,
                                         float* __restrict__ y, int channels, int steps,
                                         int phase) {
    fir32_body<true>(x, w, y, channels, steps, phase);
}
__global__ void fir32_ring_static_phase(const float* __restrict__ x, const float* __restrict__ w,
                                        float* __restrict__ y, int channels, int steps, int phase) {
    fir32_body<false>(x, w, y, channels, steps, phase);
}

// Tail effect: units of work, each 1024 threads x 4 independent FMA chains of `steps` (one
// 1024-thread block fills an SM's FMA pipe alone, and the dynamic shared memory it reserves
// holds the launch to one block per SM, so a unit takes the same time wherever it runs).
// The same code either way: 1.1 waves of blocks doing 8 units each, or 8x the blocks doing one.
__device__ inline void fma_units_body(const float* __restrict__ coef, float* __restrict__ out,
                                      int units_per_block, int steps) {
    for (int u = 0; u < units_per_block; ++u) {
        size_t unit = (size_t)blockIdx.x * units_per_block + u;
        size_t i = unit * 1024 + threadIdx.x;
        float m = coef[i], a0 = 0.1f, a1 = 0.2f, a2 = 0.3f, a3 = 0.4f;
        for (int s = 0; s < steps; ++s) {
            a0 = fmaf(a0, m, 1e-3f);
            a1 = fmaf(a1, m, 2e-3f);
            a2 = fmaf(a2, m, 3e-3f);
            a3 = fmaf(a3, m, 4e-3f);
        }
        out[i] = (a0 + a1) + (a2 + a3);
    }
}
__global__ void __launch_bounds__(1024, 1)
    fma_units_1p1_waves(const float* __restrict__ coef, float* __restrict__ out,
                        int units_per_block, int steps) {
    fma_units_body(coef, out, units_per_block, steps);
}
__global__ void __launch_bounds__(1024, 1)
    fma_units_8p8_waves(const float* __restrict__ coef, float* __restrict__ out,
                        int units_per_block, int steps) {
    fma_units_body(coef, out, units_per_block, steps);
}

// Undersized grid: row sums of a short, wide matrix, `splits` blocks per row, each adding its
// chunk's sum to the row's word. One block per row leaves all but 8 SMs idle.
__device__ inline void rowsum_body(const float4* __restrict__ in, float* out, size_t cols4,
                                   int splits) {
    __shared__ float scratch[32];
    size_t row = blockIdx.x / splits, part = blockIdx.x % splits, chunk = cols4 / splits;
    const float4* p = in + row * cols4 + part * chunk;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma unroll 4
    for (size_t i = threadIdx.x; i < chunk; i += blockDim.x) {
        float4 v = p[i];
        s0 += v.x;
        s1 += v.y;
        s2 += v.z;
        s3 += v.w;
    }
    float s = block_sum((s0 + s1) + (s2 + s3), scratch);
    if (threadIdx.x == 0) atomicAdd(out + row, s);
}
__global__ void __launch_bounds__(1024)
    rowsum_block_per_row(const float4* __restrict__ in, float* out, size_t cols4, int splits) {
    rowsum_body(in, out, cols4, splits);
}
__global__ void __launch_bounds__(1024)
    rowsum_blocks_per_chunk(const float4* __restrict__ in, float* out, size_t cols4, int splits) {
    rowsum_body(in, out, cols4, splits);
}

// cp.async with one stage vs eight: softmax over rows of 49152 floats, each row copied whole
// into shared memory (192 KiB: one block per SM) in 48 chunks of 4 KiB by cp.async, the online
// max and sum taken chunk by chunk, then the row normalised from shared memory. With one stage a
// block has 4 KiB in flight; with eight, 32 KiB. Each thread reads back only what it copied.
constexpr int SMX_COLS = 49152, SMX_THREADS = 256, SMX_CHUNK4 = SMX_THREADS,
              SMX_CHUNKS = SMX_COLS / 4 / SMX_CHUNK4;
constexpr int SMX_SMEM = SMX_COLS * 4 + 64 * 4;
template <int STAGES>
__device__ inline void softmax_row_body(const float* __restrict__ in, float* __restrict__ out) {
    extern __shared__ float4 row_buf[];
    float* scratch = reinterpret_cast<float*>(row_buf + SMX_COLS / 4);
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const float4* src = reinterpret_cast<const float4*>(in + (size_t)blockIdx.x * SMX_COLS);
    float4* dst = reinterpret_cast<float4*>(out + (size_t)blockIdx.x * SMX_COLS);
#pragma unroll
    for (int c = 0; c < STAGES - 1; ++c) {
        cp_async16(&row_buf[c * SMX_CHUNK4 + tid], &src[c * SMX_CHUNK4 + tid]);
        cp_async_commit();
    }
    float m = -INFINITY, l = 0;
    for (int c = 0; c < SMX_CHUNKS; ++c) {
        int ahead = c + STAGES - 1;
        if (ahead < SMX_CHUNKS)
            cp_async16(&row_buf[ahead * SMX_CHUNK4 + tid], &src[ahead * SMX_CHUNK4 + tid]);
        cp_async_commit();
        cp_async_wait<STAGES - 1>();
        float4 v = row_buf[c * SMX_CHUNK4 + tid];
        float nm = fmaxf(fmaxf(fmaxf(m, v.x), fmaxf(v.y, v.z)), v.w);
        l = l * __expf(m - nm) +
            ((__expf(v.x - nm) + __expf(v.y - nm)) + (__expf(v.z - nm) + __expf(v.w - nm)));
        m = nm;
    }
    // The row's max and sum: each warp combines its lanes' (m, l), then warp 0 the warps'.
    for (int o = 16; o > 0; o >>= 1) {
        float om = __shfl_xor_sync(0xffffffffu, m, o), ol = __shfl_xor_sync(0xffffffffu, l, o);
        float nm = fmaxf(m, om);
        l = l * __expf(m - nm) + ol * __expf(om - nm);
        m = nm;
    }
    if (lane == 0) {
        scratch[warp] = m;
        scratch[32 + warp] = l;
    }
    __syncthreads();
    float M = scratch[0];
    for (int w = 1; w < SMX_THREADS / 32; ++w) M = fmaxf(M, scratch[w]);
    float L = 0;
    for (int w = 0; w < SMX_THREADS / 32; ++w) L += scratch[32 + w] * __expf(scratch[w] - M);
    float inv = 1.0f / L;
    for (int c = 0; c < SMX_CHUNKS; ++c) {
        float4 v = row_buf[c * SMX_CHUNK4 + tid];
        dst[c * SMX_CHUNK4 + tid] = make_float4(__expf(v.x - M) * inv, __expf(v.y - M) * inv,
                                                __expf(v.z - M) * inv, __expf(v.w - M) * inv);
    }
}
__global__ void __launch_bounds__(SMX_THREADS, 1)
    softmax_row_cp_async_1stage(const float* __restrict__ in, float* __restrict__ out) {
    softmax_row_body<1>(in, out);
}
__global__ void __launch_bounds__(SMX_THREADS, 1)
    softmax_row_cp_async_8stage(const float* __restrict__ in, float* __restrict__ out) {
    softmax_row_body<8>(in, out);
}

// SFU-bound: a sum of RBF_K Gaussian bumps per element, sum_k a_k exp(-(x - c_k)^2), centres
// c_k = c0 + k d. Directly: RBF_K __expf (MUFU.EX2) per element. The fix needs two: with
// d0 = x - c0, exp(-(x - c_k)^2) = exp(-d0^2) R^k exp(-d^2 k^2), R = exp(2 d d0), so the sum is
// exp(-d0^2) times a polynomial in R with constant coefficients b_k = a_k exp(-d^2 k^2) (Horner:
// one FMA per centre).
constexpr int RBF_K = 24;
constexpr float RBF_C0 = -2.0f, RBF_D = 4.0f / 23.0f;
__constant__ float rbf_a[RBF_K], rbf_b[RBF_K];
__global__ void rbf24_expf_per_centre(const float* __restrict__ x, float* __restrict__ y,
                                      size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], s = 0;
#pragma unroll
    for (int k = 0; k < RBF_K; ++k) {
        float d = v - (RBF_C0 + k * RBF_D);
        s = fmaf(rbf_a[k], __expf(-d * d), s);
    }
    y[i] = s;
}
__global__ void rbf24_two_expf_horner(const float* __restrict__ x, float* __restrict__ y,
                                      size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float d0 = x[i] - RBF_C0;
    float g = __expf(-d0 * d0), r = __expf(2.0f * RBF_D * d0), p = rbf_b[RBF_K - 1];
#pragma unroll
    for (int k = RBF_K - 2; k >= 0; --k) p = fmaf(p, r, rbf_b[k]);
    y[i] = g * p;
}

// L2-resident working set: y[q][r] = W[r] . x[q] for `queries` vectors, one task (q, r) per warp
// in q-major order, so the grid re-reads all of W once per query, through L2 (__ldcg). A 24 MiB
// W stays in the 60 MB L2 after the first query; a 240 MiB W with a tenth of the queries makes
// the same loads from DRAM.
__device__ inline void gemv_tasks_body(const float4* __restrict__ W, const float4* __restrict__ x,
                                       float* __restrict__ y, int rows, int cols4, int queries) {
    int lane = threadIdx.x % 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    size_t tasks = (size_t)rows * queries;
    for (size_t task = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; task < tasks;
         task += warps) {
        size_t q = task / rows, r = task % rows;
        const float4* wr = W + r * cols4;
        const float4* xq = x + q * cols4;
        float s = 0;
#pragma unroll 4
        for (int c = lane; c < cols4; c += 32) {
            float4 w = __ldcg(wr + c), v = __ldg(xq + c);
            s += (w.x * v.x + w.y * v.y) + (w.z * v.z + w.w * v.w);
        }
        s = warp_sum(s);
        if (lane == 0) y[task] = s;
    }
}
__global__ void gemv_w24mib_l2_resident(const float4* __restrict__ W, const float4* __restrict__ x,
                                        float* __restrict__ y, int rows, int cols4, int queries) {
    gemv_tasks_body(W, x, y, rows, cols4, queries);
}
__global__ void gemv_w240mib_from_dram(const float4* __restrict__ W, const float4* __restrict__ x,
                                       float* __restrict__ y, int rows, int cols4, int queries) {
    gemv_tasks_body(W, x, y, rows, cols4, queries);
}

// A genuinely memory-bound op: RMSNorm over rows of 4096 floats, one 256-thread block per row,
// the row held in registers (four float4 per thread), gamma read as coalesced float4.
constexpr int RMS_COLS = 4096;
__global__ void __launch_bounds__(256)
    rmsnorm_rows(const float4* __restrict__ x, const float4* __restrict__ gamma,
                 float4* __restrict__ y) {
    __shared__ float scratch[32];
    const float4* xr = x + (size_t)blockIdx.x * (RMS_COLS / 4);
    float4 v[4];
    float ss = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        v[k] = xr[threadIdx.x + 256 * k];
        ss = fmaf(v[k].x, v[k].x,
                  fmaf(v[k].y, v[k].y, fmaf(v[k].z, v[k].z, fmaf(v[k].w, v[k].w, ss))));
    }
    __shared__ float inv;
    float total = block_sum(ss, scratch);
    if (threadIdx.x == 0) inv = rsqrtf(total / RMS_COLS + 1e-6f);
    __syncthreads();
    float4* yr = y + (size_t)blockIdx.x * (RMS_COLS / 4);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        float4 g = gamma[threadIdx.x + 256 * k];
        yr[threadIdx.x + 256 * k] = make_float4(v[k].x * inv * g.x, v[k].y * inv * g.y,
                                                v[k].z * inv * g.z, v[k].w * inv * g.w);
    }
}

// The read ceiling (timed mode only): every int4 read once, grid-strided, eight in flight.
__global__ void read_ceiling(const int4* __restrict__ in, size_t n4, int* out) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x,
           threads = (size_t)gridDim.x * blockDim.x;
    int s = 0;
#pragma unroll 8
    for (size_t i = t; i < n4; i += threads) {
        int4 v = in[i];
        s ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x7fffffff) out[0] = s;  // keeps the loads live (a chance match writes scratch)
}
