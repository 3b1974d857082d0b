// Prototype: LayerNorm's longest rows split over G blocks of a cooperative grid instead of a
// thread-block cluster. Each block holds two rows at once (a half of HALF threads each, on the
// same columns, so one copy of w and b in shared memory serves both: the lab's pair), and the
// halves' statistics meet through global memory (the L2): each half's thread 0 writes its
// (mean, M2), adds 1 to its row's counter with release semantics and spins on it with acquire
// loads until the G blocks have arrived. What it tests: whether the lab's pair, held to the
// clusters of 16 that fit on the H200 at once (7: 112 of 132 SMs), reads faster on every SM
// that G divides (groups of G blocks, as many as fit), and what the exchange through the L2
// costs against the cluster's (the same grid cut to 7 groups).
//
// Build on the GPU machine: nvcc -O3 -arch=sm_90 -I gpu -o gridpair gridpair.cu
// Run: ./gridpair [reps]   (every configuration twice, in turn; x the D2D copy of the same
// matrix in the same process, the output poisoned before each launch, median of reps).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "measure.cuh"

// The counters: per group, each half's arrivals and the blocks that have left.
enum { HALF0 = 0, HALF1 = 1, LEFT = 2, WORDS = 3 };

__device__ __forceinline__ uint64_t evict_last() {
    uint64_t q;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(q));
    return q;
}
__device__ __forceinline__ uint4 ld_row(const uint4* p, uint64_t pol) {
    uint4 v;
    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
    return v;
}
__device__ __forceinline__ void arrive_release(unsigned* p) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
// The partials bypass L1 (not coherent across SMs): relaxed at gpu scope.
__device__ __forceinline__ void st_part(float2* p, float2 v) {
    asm volatile("st.relaxed.gpu.global.v2.f32 [%0], {%1,%2};" ::"l"(p), "f"(v.x), "f"(v.y)
                 : "memory");
}
__device__ __forceinline__ float2 ld_part(const float2* p) {
    float2 v;
    asm volatile("ld.relaxed.gpu.global.v2.f32 {%0,%1}, [%2];"
                 : "=f"(v.x), "=f"(v.y)
                 : "l"(p)
                 : "memory");
    return v;
}
__device__ __forceinline__ void bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int n) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

template <typename T> struct El;
template <> struct El<float> {
    static constexpr int N = 4;
    __device__ static float get(const uint4& v, int k) { return __uint_as_float((&v.x)[k]); }
    __device__ static float get_again(const uint4& v, int k) { return get(v, k); }
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
    // The same, unpacked again through asm the compiler does not merge with `get`: else it
    // holds the 64 unpacked elements from the statistic to the output and spills.
    __device__ static float get_again(const uint4& v, int k) {
        uint32_t w = (&v.x)[k / 2], r;
        if (k % 2)
            asm("and.b32 %0, %1, 0xffff0000;" : "=r"(r) : "r"(w));
        else
            asm("shl.b32 %0, %1, 16;" : "=r"(r) : "r"(w));
        return __uint_as_float(r);
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

// A part's mean and squared deviations, every part of the same count: the butterfly's steps
// below `width` merge lane l's with lane l ^ mask's (Chan et al.'s rule, its factor a half).
struct MV {
    float mean, m2;
};
__device__ __forceinline__ MV merge_equal(MV s, float n, int width) {
    for (int m = 16; m; m /= 2)
        if (m < width) {
            const float om = __shfl_xor_sync(~0u, s.mean, m), oq = __shfl_xor_sync(~0u, s.m2, m);
            const float d = om - s.mean;
            s = {0.5f * (s.mean + om), s.m2 + oq + d * d * (0.5f * n)};
            n *= 2;
        }
    return s;
}

constexpr unsigned SPIN_LIMIT = 1u << 22;  // seconds of L2 round trips: a hang becomes a trap

// Rows of exactly G · HALF · L vectors. Dynamic shared memory: the block's w, then its b
// (L · HALF vectors each).
template <typename T, int HALF, int L>
__global__ void __launch_bounds__(2 * HALF, 1024 / (2 * HALF))
    gridpair(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* y,
             int rows, int cols, float eps, unsigned* sync, float2* parts) {
    using E = El<T>;
    constexpr int N = E::N, W = HALF / 32;
    extern __shared__ uint4 kept[];
    __shared__ float2 slots[2][W];
    const int h = threadIdx.x >= HALF, t = threadIdx.x - h * HALF;
    const int warp = t / 32, lane = t % 32;
    const int G = cols / N / (HALF * L);
    const int rank = blockIdx.x % G, group = blockIdx.x / G, groups = gridDim.x / G;
    const int first = rank * HALF * L + t;  // this thread's first vector of a row
    const uint64_t pol = evict_last();
    if (h == 0)
#pragma unroll
        for (int j = 0; j < L; ++j) {
            kept[j * HALF + t] = ld_row(reinterpret_cast<const uint4*>(w) + first + j * HALF, pol);
            kept[(L + j) * HALF + t] =
                ld_row(reinterpret_cast<const uint4*>(b) + first + j * HALF, pol);
        }
    __syncthreads();
    // The second half starts once the first has merged its first row: one loads while the
    // other merges and writes.
    if (h == 1) bar_sync(3, 2 * HALF);
    unsigned* arrived = sync + group * WORDS + h;
    int turn = 0;
    for (int row = group * 2 + h; row < rows; row += 2 * groups, ++turn) {
        const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)row * cols) + first;
        uint4 v[L];
#pragma unroll
        for (int j = 0; j < L; ++j) v[j] = ld_row(xr + j * HALF, pol);
        // One pass over the held row, shifted by the thread's first element (no
        // cancellation worth the name for rows of one scale): held across a second pass, the
        // unpacked BF16 elements took 128 registers.
        const float c = E::get(v[0], 0);
        float s = 0, q = 0;
#pragma unroll
        for (int j = 0; j < L; ++j)
#pragma unroll
            for (int k = 0; k < N; ++k) {
                const float d = E::get(v[j], k) - c;
                s += d;
                q += d * d;
            }
        const float n0 = L * N, mean0 = c + s / n0;
        q = fmaxf(q - s * (s / n0), 0.f);
        MV st = merge_equal({mean0, q}, n0, 32);
        if (lane == 0) slots[h][warp] = make_float2(st.mean, st.m2);
        bar_sync(1 + h, HALF);
        const float2 sl = slots[h][lane % W];
        st = merge_equal({sl.x, sl.y}, 32 * n0, W);
        // The exchange: a turn's parts alternate with the next's; a block writes a turn's
        // parts again only after every block has arrived at the turn between, so after each
        // has read them.
        float2* mine = parts + ((size_t)(group * 2 + h) * 2 + (turn & 1)) * G;
        if (t == 0) {
            st_part(mine + rank, make_float2(st.mean, st.m2));
            arrive_release(arrived);
            const unsigned target = (unsigned)G * (turn + 1);
            unsigned spins = 0;
            while (ld_acquire(arrived) < target)
                if (++spins > SPIN_LIMIT) __trap();
        }
        bar_sync(1 + h, HALF);
        const float2 p = ld_part(mine + lane % G);
        st = merge_equal({p.x, p.y}, (float)(HALF * L * N), G);
        if (h == 0 && turn == 0) bar_arrive(3, 2 * HALF);
        const float mean = st.mean, rstd = rsqrtf(st.m2 / cols + eps);
        uint4* yr = reinterpret_cast<uint4*>(y + (size_t)row * cols) + first;
#pragma unroll
        for (int j = 0; j < L; ++j) {
            const uint4 wv = kept[j * HALF + t], bv = kept[(L + j) * HALF + t];
            float o[N];
#pragma unroll
            for (int k = 0; k < N; ++k)
                o[k] = (E::get_again(v[j], k) - mean) * rstd * E::get(wv, k) + E::get(bv, k);
            yr[j * HALF] = E::pack(o);
        }
    }
    // A half with no row at all still let the other start.
    if (h == 0 && turn == 0) bar_arrive(3, 2 * HALF);
    // The last of the group's blocks to leave resets its counters for the next launch: every
    // block has passed its last wait by then.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(sync + group * WORDS + LEFT, 1u) == (unsigned)G - 1) {
            sync[group * WORDS + HALF0] = 0;
            sync[group * WORDS + HALF1] = 0;
            sync[group * WORDS + LEFT] = 0;
        }
    }
}

struct Result {
    std::string name;
    std::vector<double> xcopy;
};

template <typename T, int HALF, int L>
void run(const char* tname, int rows, int cols, int groups_asked, int reps, double copy_us, T* x,
         T* w, T* b, T* y, unsigned* sync, float2* parts, std::vector<Result>& out, size_t slot) {
    auto k = gridpair<T, HALF, L>;
    constexpr int N = El<T>::N;
    const int G = cols / N / (HALF * L);
    if (G < 1 || G > 32 || (G & (G - 1)) || (size_t)G * HALF * L * N != (size_t)cols) {
        std::printf("skip %s %dx%d HALF=%d: the row is not G * %d vectors (G a power of two <= 32)\n", tname,
                    rows, cols, HALF, HALF * L);
        return;
    }
    const int smem = 2 * L * HALF * 16;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 2 * HALF, smem));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int fit = sms * per_sm / G, pairs = (rows + 1) / 2;
    int groups = groups_asked > 0 ? groups_asked : fit;
    groups = std::min(groups, pairs);
    if (groups > fit || groups < 1) {
        std::printf("skip %s %dx%d HALF=%d groups=%d: %d fit\n", tname, rows, cols, HALF, groups,
                    fit);
        return;
    }
    const float eps = 1e-5f;
    dim3 grid(groups * G), block(2 * HALF);
    void* args[] = {&x, &w, &b, &y, (void*)&rows, (void*)&cols, (void*)&eps, &sync, &parts};
    auto launch = [&] {
        CHECK(cudaLaunchCooperativeKernel((void*)k, grid, block, args, smem, 0));
    };
    const size_t bytes = (size_t)rows * cols * sizeof(T);
    auto us = time_launches(launch, y, bytes, 0xff, reps);
    double med = median(us);
    std::sort(us.begin(), us.end());
    const double moved = (2.0 * rows + 2) * cols * sizeof(T);
    const double xc = (moved / med) / (2.0 * bytes / copy_us);
    // The counters are back to zero, and every seventh row and the last two (rows of both
    // halves, at every turn) against the f64 reference.
    std::vector<unsigned> hs(groups * WORDS);
    CHECK(cudaMemcpy(hs.data(), sync, hs.size() * 4, cudaMemcpyDeviceToHost));
    bool reset = std::all_of(hs.begin(), hs.end(), [](unsigned v) { return v == 0; });
    std::vector<T> hx(cols), hy(cols), hw(cols), hb(cols);
    CHECK(cudaMemcpy(hw.data(), w, cols * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hb.data(), b, cols * sizeof(T), cudaMemcpyDeviceToHost));
    double err = 0;
    std::vector<int> checked;
    for (int r = 0; r < rows; r += 7) checked.push_back(r);
    checked.push_back(std::max(rows - 2, 0));
    checked.push_back(rows - 1);
    for (int r : checked) {
        CHECK(cudaMemcpy(hx.data(), x + (size_t)r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hy.data(), y + (size_t)r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
        auto f = [](T v) { return (double)(float)v; };
        double s = 0, var = 0;
        for (int i = 0; i < cols; ++i) s += f(hx[i]);
        const double mean = s / cols;
        for (int i = 0; i < cols; ++i) var += (f(hx[i]) - mean) * (f(hx[i]) - mean);
        var /= cols;
        for (int i = 0; i < cols; ++i) {
            double ref = (f(hx[i]) - mean) / std::sqrt(var + eps) * f(hw[i]) + f(hb[i]);
            err = std::max(err, std::fabs(f(hy[i]) - ref) / (std::fabs(ref) + 1.0));
        }
    }
    char name[160];
    std::snprintf(name, sizeof name, "layernorm %-4s %4dx%-6d HALF=%-3d G=%-2d groups=%-2d SMs=%-3d",
                  tname, rows, cols, HALF, G, groups, groups * G / per_sm);
    std::printf("%s  %7.1f us  [%.1f..%.1f]  %.3f x copy  relerr %.1e  counters %s\n", name, med,
                us.front(), us.back(), xc, err, reset ? "reset" : "NOT RESET");
    std::fflush(stdout);
    if (out.size() <= slot) out.resize(slot + 1);
    out[slot].name = name;
    out[slot].xcopy.push_back(xc);
}

template <typename T, int HALF_A, int HALF_B>
void shape(const char* tname, int rows, int cols, int reps) {
    const size_t n = (size_t)rows * cols;
    T *x, *y, *w, *b;
    CHECK(cudaMalloc(&x, n * sizeof(T)));
    CHECK(cudaMalloc(&y, n * sizeof(T)));
    CHECK(cudaMalloc(&w, cols * sizeof(T)));
    CHECK(cudaMalloc(&b, cols * sizeof(T)));
    unsigned* sync;
    float2* parts;
    CHECK(cudaMalloc(&sync, 1024 * WORDS * 4));
    CHECK(cudaMemset(sync, 0, 1024 * WORDS * 4));
    CHECK(cudaMalloc(&parts, 1024 * 2 * 2 * 32 * sizeof(float2)));
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
    auto copy = [&] {
        auto cus = time_launches(
            [&] { CHECK(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice)); }, y,
            n * sizeof(T), 0xff, reps);
        return median(cus);
    };
    std::vector<Result> out;
    for (int round = 0; round < 2; ++round) {
        const double copy_us = copy();
        std::printf("copy %s %dx%d: %.1f us (%.0f GB/s)\n", tname, rows, cols, copy_us,
                    2.0 * n * sizeof(T) / copy_us / 1e3);
        size_t slot = 0;
        // 7 groups of 16 blocks of one per SM: the SMs the cluster pair gets on the H200.
        for (int groups : {7, 0}) {
            run<T, HALF_A, 8>(tname, rows, cols, groups, reps, copy_us, x, w, b, y, sync, parts,
                              out, slot++);
            run<T, HALF_B, 8>(tname, rows, cols, groups, reps, copy_us, x, w, b, y, sync, parts,
                              out, slot++);
        }
    }
    for (auto& r : out)
        if (!r.name.empty())
            std::printf("summary %s  x copy %.3f %.3f\n", r.name.c_str(), r.xcopy.front(),
                        r.xcopy.back());
    cudaFree(x), cudaFree(y), cudaFree(w), cudaFree(b), cudaFree(sync), cudaFree(parts);
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    std::printf("# %s, %d SMs, gridpair prototype, %d reps\n", p.name, p.multiProcessorCount, reps);
    // f32: halves of 512 (the lab's pair, one block an SM) and of 256 (two an SM); BF16: 256
    // (the lab's) and 128.
    // An odd count of rows, fewer than the groups that fit: the last group's second half holds
    // none (a check of the protocol; its times mean nothing).
    shape<float, 512, 256>("f32", 5, 262144, 3);
    shape<float, 512, 256>("f32", 256, 262144, reps);
    shape<float, 512, 256>("f32", 1024, 131072, reps);
    shape<__nv_bfloat16, 256, 128>("bf16", 256, 262144, reps);
    shape<__nv_bfloat16, 256, 128>("bf16", 1024, 131072, reps);
}
