// The chapter's kernels in CUDA C++, written the straightforward way, for the third column of
// every comparison: the same algorithms as gpu-kernels/src (same entry names, parameters and
// launch shapes, so the host launches them with the same launchers and the same tests check
// them), compiled by nvcc 13 (`cargo xtask ptx` → target/ptx/nvcc/gpu_kernels.ptx).
//
// What "straightforward" means here: the chapter's pseudocode as a CUDA programmer writes it —
// `extern __shared__`, `__syncthreads()`, `atomicAdd`, `__shfl_down_sync`, `float4` loads through
// a cast pointer — and no tricks the Rust versions do not also use (no `__restrict__`, no
// `__ldg`, no `#pragma unroll` beyond what the Rust loops get from constant trip counts).
// The kernels beyond the chapter (the Rust side's attempts at CUB and the device-to-device copy)
// have no C++ twin.
//
// Integer sums wrap like Rust's `wrapping_add` (added as unsigned: signed overflow is
// undefined in C++, and the tests check the wrap).

#include <cstdint>

// The launch constants come from gpu-kernels/src/launch.rs, the Rust kernels' own file:
// `cargo xtask ptx` and `cargo xtask dist` pass each as -DLAB_<MODULE>_<NAME>=<value>
// (catalog::cdefs), so the two sides cannot drift apart.
#if !defined(LAB_REDUCE_BLOCK) || !defined(LAB_REDUCE_WARPS) || !defined(LAB_REDUCE_COARSEN) || \
    !defined(LAB_TRANSPOSE_TILE) || !defined(LAB_TRANSPOSE_ROWS_PER_PASS) ||                  \
    !defined(LAB_STREAM_FMA_CHAINS) ||                         \
    !defined(LAB_STREAM_FMA_UNROLL)
#error "launch constants missing (-DLAB_*): build with cargo xtask ptx or cargo xtask dist"
#endif

namespace chapter {

constexpr unsigned BLOCK = LAB_REDUCE_BLOCK;
constexpr unsigned WARPS = LAB_REDUCE_WARPS;
constexpr unsigned COARSEN = LAB_REDUCE_COARSEN;
constexpr unsigned TILE = LAB_TRANSPOSE_TILE;
constexpr unsigned ROWS_PER_PASS = LAB_TRANSPOSE_ROWS_PER_PASS;
constexpr unsigned FMA_CHAINS = LAB_STREAM_FMA_CHAINS;
constexpr unsigned FMA_UNROLL = LAB_STREAM_FMA_UNROLL;

__device__ __forceinline__ float plus(float a, float b) { return a + b; }
__device__ __forceinline__ int plus(int a, int b) {
    return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
}

// The block's dynamic shared memory as T (one `extern __shared__` for every instantiation).
template <typename T>
__device__ __forceinline__ T* shared() {
    extern __shared__ __align__(16) unsigned char smem[];
    return reinterpret_cast<T*>(smem);
}

// s[tid] = i < n ? in[i] : 0; __syncthreads();  (v1, v2, v3)
template <typename T>
__device__ __forceinline__ void load_to_shared(T* s, const T* in, std::uint64_t n) {
    std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
}

// v1, interleaved addressing.
template <typename T>
__device__ __forceinline__ void reduce_v1(const T* in, std::uint64_t n, T* out) {
    T* s = shared<T>();
    unsigned tid = threadIdx.x;
    load_to_shared(s, in, n);
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (tid % (2 * stride) == 0) s[tid] = plus(s[tid], s[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

// v2, compact thread index.
template <typename T>
__device__ __forceinline__ void reduce_v2(const T* in, std::uint64_t n, T* out) {
    T* s = shared<T>();
    unsigned tid = threadIdx.x;
    load_to_shared(s, in, n);
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        unsigned idx = 2 * stride * tid;
        if (idx < BLOCK) s[idx] = plus(s[idx], s[idx + stride]);
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

// v3's tree: fold the upper half onto the lower half until `values` remain in s[0..values).
template <typename T>
__device__ __forceinline__ void tree_v3(T* s, unsigned tid, unsigned values) {
    for (unsigned stride = BLOCK / 2; stride >= values; stride >>= 1) {
        if (tid < stride) s[tid] = plus(s[tid], s[tid + stride]);
        __syncthreads();
    }
}

// v3, sequential addressing.
template <typename T>
__device__ __forceinline__ void reduce_v3(const T* in, std::uint64_t n, T* out) {
    T* s = shared<T>();
    load_to_shared(s, in, n);
    tree_v3(s, threadIdx.x, 1);
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

// v4's load: this thread's private sum of its 8 values, 256 apart (coalesced at every k).
template <typename T>
__device__ __forceinline__ T coarsened_sum(const T* in, std::uint64_t n) {
    std::uint64_t base = static_cast<std::uint64_t>(blockIdx.x) * BLOCK * COARSEN + threadIdx.x;
    T sum = 0;
    for (unsigned k = 0; k < COARSEN; ++k) {
        std::uint64_t idx = base + k * BLOCK;
        if (idx < n) sum = plus(sum, in[idx]);
    }
    return sum;
}

// v4, coarsening: 8 values per thread, then v3's tree.
template <typename T>
__device__ __forceinline__ void reduce_v4(const T* in, std::uint64_t n, T* out) {
    T* s = shared<T>();
    unsigned tid = threadIdx.x;
    s[tid] = coarsened_sum(in, n);
    __syncthreads();
    tree_v3(s, tid, 1);
    if (tid == 0) atomicAdd(out, s[0]);
}

// Sum over the warp, in lane 0.
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (unsigned offset = 16; offset > 0; offset >>= 1)
        v = plus(v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;
}

// v5: v4 with shuffles for the last levels: v4's 8 values per thread, v3's tree down to 64
// values, then warp 0 adds the two halves and finishes with five shuffles.
template <typename T>
__device__ __forceinline__ void reduce_v5(const T* in, std::uint64_t n, T* out) {
    T* s = shared<T>();
    unsigned tid = threadIdx.x;
    s[tid] = coarsened_sum(in, n);
    __syncthreads();
    tree_v3(s, tid, 64);
    if (tid < 32) {
        T v = warp_sum(plus(s[tid], s[tid + 32]));
        if (tid == 0) atomicAdd(out, v);
    }
}

template <typename T> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<int> { using type = int4; };

// v6: one wave, grid-stride loop of 16-byte loads between a scalar head and tail, warp
// shuffles, one shared slot per warp.
template <typename T>
__device__ __forceinline__ void reduce_v6(const T* in, std::uint64_t n, T* out) {
    using V = typename Vec4<T>::type;
    unsigned tid = threadIdx.x;
    std::uint64_t gtid = static_cast<std::uint64_t>(blockIdx.x) * BLOCK + tid;
    std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * BLOCK;

    // Split [0, n) into scalar head | 16-byte body | scalar tail.
    std::uint64_t misaligned = (reinterpret_cast<std::uintptr_t>(in) % 16) / sizeof(T);
    std::uint64_t head = misaligned == 0 ? 0 : (4 - misaligned < n ? 4 - misaligned : n);
    std::uint64_t groups = (n - head) / 4;
    std::uint64_t tail = head + groups * 4;

    T sum = 0;
    if (gtid < head) sum = in[gtid];
    if (gtid < n - tail) sum = plus(sum, in[tail + gtid]);
    const V* body = reinterpret_cast<const V*>(in + head);
    for (std::uint64_t i = gtid; i < groups; i += threads) {
        V v = body[i];
        sum = plus(sum, plus(plus(v.x, v.y), plus(v.z, v.w)));
    }

    T* s = shared<T>();
    sum = warp_sum(sum);
    if (tid % 32 == 0) s[tid / 32] = sum;
    __syncthreads();
    if (tid < 32) {
        T v = warp_sum(tid < WARPS ? s[tid] : T(0));
        if (tid == 0) atomicAdd(out, v);
    }
}

// The transposes: output[c][r] = input[r][c] for a rows × cols input.
__device__ __forceinline__ std::uint64_t at(unsigned row, unsigned col, unsigned width) {
    return static_cast<std::uint64_t>(row) * width + col;
}

template <unsigned PITCH>
__device__ __forceinline__ void transpose_tile(const float* in, float* out, unsigned rows,
                                               unsigned cols) {
    float* tile = shared<float>();
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned x = blockIdx.x * TILE + tx;
    unsigned y0 = blockIdx.y * TILE + ty;
    for (unsigned j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < cols && y0 + j < rows) tile[(ty + j) * PITCH + tx] = in[at(y0 + j, x, cols)];
    __syncthreads();

    x = blockIdx.y * TILE + tx;   // output column = input row
    y0 = blockIdx.x * TILE + ty;  // output row = input column
    for (unsigned j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < rows && y0 + j < cols) out[at(y0 + j, x, rows)] = tile[tx * PITCH + ty + j];
}

// The read ceiling's fold: XOR of a 16-byte group's four words.
__device__ __forceinline__ unsigned fold(float4 v) {
    return __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^
           __float_as_uint(v.w);
}

}  // namespace chapter

using namespace chapter;

// Entry points, named as in the Rust crate (`reduce_v3_f32`): the host finds them by name.
#define REDUCE_ENTRIES(version)                                                            \
    extern "C" __global__ void version##_f32(const float* in, std::uint64_t n, float* out) { \
        version(in, n, out);                                                               \
    }                                                                                      \
    extern "C" __global__ void version##_i32(const int* in, std::uint64_t n, int* out) {     \
        version(in, n, out);                                                               \
    }
REDUCE_ENTRIES(reduce_v1)
REDUCE_ENTRIES(reduce_v2)
REDUCE_ENTRIES(reduce_v3)
REDUCE_ENTRIES(reduce_v4)
REDUCE_ENTRIES(reduce_v5)
REDUCE_ENTRIES(reduce_v6)

// Naive: coalesced reads along a row, writes down a column.
extern "C" __global__ void transpose_naive_f32(const float* in, float* out, unsigned rows,
                                               unsigned cols) {
    unsigned x = blockIdx.x * TILE + threadIdx.x;
    unsigned y0 = blockIdx.y * TILE + threadIdx.y;
    for (unsigned j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < cols && y0 + j < rows) out[at(x, y0 + j, rows)] = in[at(y0 + j, x, cols)];
}
extern "C" __global__ void transpose_tiled_f32(const float* in, float* out, unsigned rows,
                                               unsigned cols) {
    transpose_tile<TILE>(in, out, rows, cols);
}
extern "C" __global__ void transpose_padded_f32(const float* in, float* out, unsigned rows,
                                                unsigned cols) {
    transpose_tile<TILE + 1>(in, out, rows, cols);
}

// The read ceiling: every byte read once, thread t reads 16-byte group t (a flat grid of n/4
// threads), the first n % 4 threads one element each of the tail; a store only if a thread's
// XOR equals `sentinel` (which the host picks so it never happens).
extern "C" __global__ void read_stream_f32(const float* in, std::uint64_t n, unsigned sentinel,
                                           unsigned* out) {
    std::uint64_t gtid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    std::uint64_t groups = n / 4;
    unsigned acc = 0;
    if (gtid < groups) acc = fold(reinterpret_cast<const float4*>(in)[gtid]);
    if (gtid < n - groups * 4) acc ^= __float_as_uint(in[groups * 4 + gtid]);
    if (acc == sentinel) *out = acc;
}

// The copy ceiling as a kernel: output[i] = input[i], thread t copies 16-byte group t (a flat
// grid of n/4 threads), the first n % 4 threads one element each of the scalar tail.
extern "C" __global__ void copy_stream_f32(const float* in, float* out, std::uint64_t n) {
    std::uint64_t gtid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    std::uint64_t groups = n / 4;
    if (gtid < groups)
        reinterpret_cast<float4*>(out)[gtid] = reinterpret_cast<const float4*>(in)[gtid];
    if (gtid < n - groups * 4) out[groups * 4 + gtid] = in[groups * 4 + gtid];
}

// The compute ceiling: FMA_CHAINS independent chains of x = x·a + b, no memory traffic.
extern "C" __global__ void fma_peak_f32(unsigned iters, float a, float b, float sentinel,
                                        float* out) {
    float t = static_cast<float>(blockIdx.x * blockDim.x + threadIdx.x);
    float x[FMA_CHAINS];
    for (unsigned k = 0; k < FMA_CHAINS; ++k) x[k] = t + k;
    for (unsigned i = 0; i < iters; ++i)
        for (unsigned u = 0; u < FMA_UNROLL; ++u)
            for (unsigned k = 0; k < FMA_CHAINS; ++k) x[k] = fmaf(x[k], a, b);
    float sum = 0;
    for (unsigned k = 0; k < FMA_CHAINS; ++k) sum += x[k];
    if (sum == sentinel) *out = sum;
}

// The launch-gap demo kernel: data[i] += 1.
extern "C" __global__ void bump(float* data, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1.0f;
}
