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
    !defined(LAB_STREAM_FMA_UNROLL) || !defined(LAB_ROWS_WARP_VECTORS) ||                      \
    !defined(LAB_ROWS_NARROW_VECTORS) ||                                                       \
    !defined(LAB_ROWS_BLOCK_VECTORS) || !defined(LAB_ROWS_CLUSTER_VECTORS) ||                  \
    !defined(LAB_ROWS_SLOT_WORDS)
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

// ---- The row-wise family's softmax (gpu-kernels/src/rows.rs), in each schedule. ----
// The same algorithm as the Rust kernels: each thread holds LOADS 16-byte vectors of its row
// (vector rank*T*LOADS + t + j*T), its own max and sum of exp(x - max) merged by shuffles,
// shared slots and, in a cluster, every block's statistic sent to every block's shared memory
// by st.async and counted by its mbarrier; every element written from the registers. A
// misaligned pointer or cols not a multiple of the vector's elements takes the element-by-
// element path, reading the row again each pass. Same entry names, parameters (x, w, b, y,
// rows, cols, eps; w, b and eps unread) and launches as the Rust kernels.

#include <cooperative_groups.h>
#include <cuda_bf16.h>

namespace rows {

namespace cg = cooperative_groups;

constexpr unsigned WARP_VECTORS = LAB_ROWS_WARP_VECTORS;
constexpr unsigned NARROW_VECTORS = LAB_ROWS_NARROW_VECTORS;
constexpr unsigned BLOCK_VECTORS = LAB_ROWS_BLOCK_VECTORS;
constexpr unsigned BLOCK_MAX_THREADS = LAB_ROWS_BLOCK_MAX_THREADS;
constexpr unsigned CLUSTER_VECTORS = LAB_ROWS_CLUSTER_VECTORS;
constexpr unsigned SLOT_WORDS = LAB_ROWS_SLOT_WORDS;
constexpr unsigned CLUSTER_MAX = LAB_ROWS_CLUSTER_MAX;

// f32: four per 16-byte vector.
struct F32 {
    using T = float;
    static constexpr unsigned PER_VEC = 4;
    __device__ static float get(const uint4& v, unsigned k) {
        return __uint_as_float((&v.x)[k]);
    }
    __device__ static uint4 pack(const float* o) {
        return make_uint4(__float_as_uint(o[0]), __float_as_uint(o[1]), __float_as_uint(o[2]),
                          __float_as_uint(o[3]));
    }
};

// bf16: eight per 16-byte vector, converted to f32 to compute, rounded to nearest on store.
struct BF16 {
    using T = __nv_bfloat16;
    static constexpr unsigned PER_VEC = 8;
    __device__ static float get(const uint4& v, unsigned k) {
        return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(&v)[k]);
    }
    __device__ static uint4 pack(const float* o) {
        uint4 v;
        __nv_bfloat162* p = reinterpret_cast<__nv_bfloat162*>(&v);
        for (unsigned i = 0; i < 4; ++i) p[i] = __floats2bfloat162_rn(o[2 * i], o[2 * i + 1]);
        return v;
    }
};

// The L2 policies of a row's loads, and a 16-byte load under one: the row is loaded as the Rust
// kernels load it, `evict_last` (keep the lines past the L2's others) in a block or a cluster,
// `evict_normal` in a warp (rows.rs's `load` says why).
__device__ __forceinline__ std::uint64_t l2_evict_last() {
    std::uint64_t policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
__device__ __forceinline__ std::uint64_t l2_evict_normal() {
    std::uint64_t policy;
    asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
__device__ __forceinline__ uint4 load_with(const uint4* p, std::uint64_t policy) {
    uint4 v;
    asm("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p), "l"(policy));
    return v;
}

// A part's max (NaN ignored) and sum of exp(x - shift(max)); shift is 0 for a part of -inf
// alone, so its exponentials are 0, not exp(-inf + inf) = NaN.
struct MaxSum {
    float max, sum;
};
__device__ __forceinline__ float shift(float m) { return m == -INFINITY ? 0.0f : m; }
__device__ __forceinline__ float rescaled(MaxSum a, float to) {
    return a.sum * (a.max == -INFINITY ? 0.0f : __expf(a.max - to));
}
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    float m = fmaxf(a.max, b.max);
    float to = shift(m);
    return {m, rescaled(a, to) + rescaled(b, to)};
}
__device__ __forceinline__ MaxSum warp_merge(MaxSum s) {
    for (int mask = 16; mask > 0; mask >>= 1)
        s = merge(s, {__shfl_xor_sync(0xffffffffu, s.max, mask),
                      __shfl_xor_sync(0xffffffffu, s.sum, mask)});
    return s;
}
// The block's statistic through 32 warp slots at `slots`.
__device__ __forceinline__ MaxSum block_merge(MaxSum s, float* slots) {
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    s = warp_merge(s);
    if (lane == 0) {
        slots[warp * SLOT_WORDS] = s.max;
        slots[warp * SLOT_WORDS + 1] = s.sum;
    }
    __syncthreads();
    MaxSum mine = {-INFINITY, 0.0f};
    if (lane < warps) mine = {slots[lane * SLOT_WORDS], slots[lane * SLOT_WORDS + 1]};
    return warp_merge(mine);
}

enum class Group { Warp, Block, Cluster };

// Where a thread sits: its row, its block's rank in the cluster, its index among its block's
// threads of the row and how many those are; false when its group has no row.
template <Group G>
__device__ __forceinline__ bool seat(unsigned rows, unsigned& row, unsigned& rank, unsigned& t,
                                     unsigned& threads) {
    if (G == Group::Warp) {
        row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
        rank = 0, t = threadIdx.x % 32, threads = 32;
    } else if (G == Group::Block) {
        row = blockIdx.x;
        rank = 0, t = threadIdx.x, threads = blockDim.x;
    } else {
        cg::cluster_group cluster = cg::this_cluster();
        row = blockIdx.x / cluster.num_blocks();
        rank = cluster.block_rank(), t = threadIdx.x, threads = blockDim.x;
    }
    return row < rows;
}

// A cluster's shared memory past the block's 32 warp slots (as rows/group.rs lays it out): 32
// more (odd turns), the blocks' statistics of even and odd turns, two barriers that count them.
__device__ __forceinline__ float* warp_slots(unsigned turn) {
    return chapter::shared<float>() + (turn % 2) * 32 * SLOT_WORDS;
}
__device__ __forceinline__ float* block_slots(unsigned turn) {
    return chapter::shared<float>() + 64 * SLOT_WORDS + (turn % 2) * CLUSTER_MAX * SLOT_WORDS;
}
__device__ __forceinline__ unsigned arrived(unsigned turn) {
    auto base = reinterpret_cast<char*>(chapter::shared<float>());
    auto bar = base + (64 + 2 * CLUSTER_MAX) * SLOT_WORDS * 4 + (turn % 2) * 8;
    return static_cast<unsigned>(__cvta_generic_to_shared(bar));
}
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Before the group's first row: thread 0 sets up the cluster's two barriers, then a cluster
// barrier so no block sends to another's before they are.
template <Group G>
__device__ __forceinline__ void start() {
    if (G != Group::Cluster) return;
    if (threadIdx.x == 0)
        for (unsigned t = 0; t < 2; ++t)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(arrived(t)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

// The statistic over the group, in every thread (the cluster: each block's sent to every
// block's slot by st.async, counted by that block's barrier; each block waits for its own).
template <Group G>
__device__ __forceinline__ MaxSum group_merge(MaxSum s, unsigned rank, unsigned turn) {
    if (G == Group::Warp) return warp_merge(s);
    if (G == Group::Block) return block_merge(s, chapter::shared<float>());
    s = block_merge(s, warp_slots(turn));
    float* slots = block_slots(turn);
    unsigned bar = arrived(turn), blocks = cg::this_cluster().num_blocks();
    if (threadIdx.x == 0)
        asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }"
                     ::"r"(bar), "r"(blocks * 8) : "memory");
    if (threadIdx.x < blocks) {
        unsigned mine = shared_address(slots + rank * SLOT_WORDS);
        float words[2] = {s.max, s.sum};
        for (unsigned i = 0; i < 2; ++i)
            asm volatile(
                "{ .reg .u32 rp, rb; mapa.shared::cluster.u32 rp, %0, %2; "
                "mapa.shared::cluster.u32 rb, %1, %2; "
                "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [rp], %3, [rb]; }"
                ::"r"(mine + 4 * i), "r"(bar), "r"(threadIdx.x), "r"(__float_as_uint(words[i]))
                : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"((turn / 2) % 2) : "memory");
    unsigned lane = threadIdx.x % 32;
    MaxSum theirs = {-INFINITY, 0.0f};
    if (lane < blocks) theirs = {slots[lane * SLOT_WORDS], slots[lane * SLOT_WORDS + 1]};
    return warp_merge(theirs);
}

// After the group's last row: no block of a cluster exits while another may send to it.
template <Group G>
__device__ __forceinline__ void done() {
    if (G != Group::Cluster) return;
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

// The rows a cluster walks: its grid holds only the clusters that fit at once (the host's
// launch), each taking every such row.
__device__ __forceinline__ unsigned cluster_stride() {
    return gridDim.x / cg::this_cluster().num_blocks();
}

template <class E, Group G, unsigned L>
__device__ __forceinline__ void softmax_row(const typename E::T* x, typename E::T* y,
                                            unsigned row, unsigned rank, unsigned t,
                                            unsigned threads, unsigned cols, unsigned turn) {
    std::uint64_t start = static_cast<std::uint64_t>(row) * cols;
    x += start, y += start;
    unsigned first = rank * threads * L + t;
    bool aligned = (reinterpret_cast<std::uintptr_t>(x) % 16 == 0) &&
                   (reinterpret_cast<std::uintptr_t>(y) % 16 == 0) && cols % E::PER_VEC == 0;
    if (aligned) {
        unsigned vectors = cols / E::PER_VEC;
        uint4 held[L];
        std::uint64_t policy = G == Group::Warp ? l2_evict_normal() : l2_evict_last();
        for (unsigned j = 0; j < L; ++j) {
            unsigned i = first + j * threads;
            held[j] = i < vectors ? load_with(reinterpret_cast<const uint4*>(x) + i, policy)
                                  : make_uint4(0, 0, 0, 0);
        }
        float m = -INFINITY;
        for (unsigned j = 0; j < L; ++j)
            if (first + j * threads < vectors)
                for (unsigned k = 0; k < E::PER_VEC; ++k) m = fmaxf(m, E::get(held[j], k));
        float to = shift(m), sum = 0.0f;
        for (unsigned j = 0; j < L; ++j)
            if (first + j * threads < vectors)
                for (unsigned k = 0; k < E::PER_VEC; ++k) sum += __expf(E::get(held[j], k) - to);
        MaxSum s = group_merge<G>({m, sum}, rank, turn);
        float row_to = shift(s.max), inv = 1.0f / s.sum;
        for (unsigned j = 0; j < L; ++j) {
            unsigned i = first + j * threads;
            if (i < vectors) {
                float o[8];
                for (unsigned k = 0; k < E::PER_VEC; ++k)
                    o[k] = __expf(E::get(held[j], k) - row_to) * inv;
                reinterpret_cast<uint4*>(y)[i] = E::pack(o);
            }
        }
    } else {
        unsigned vectors = (cols + E::PER_VEC - 1) / E::PER_VEC;
        unsigned end = min(rank * threads * L + threads * L, vectors);
        auto value = [&](std::uint64_t e) { return static_cast<float>(x[e]); };
        float m = -INFINITY;
        for (unsigned v = first; v < end; v += threads)
            for (unsigned k = 0; k < E::PER_VEC; ++k) {
                std::uint64_t e = static_cast<std::uint64_t>(v) * E::PER_VEC + k;
                if (e < cols) m = fmaxf(m, value(e));
            }
        float to = shift(m), sum = 0.0f;
        for (unsigned v = first; v < end; v += threads)
            for (unsigned k = 0; k < E::PER_VEC; ++k) {
                std::uint64_t e = static_cast<std::uint64_t>(v) * E::PER_VEC + k;
                if (e < cols) sum += __expf(value(e) - to);
            }
        MaxSum s = group_merge<G>({m, sum}, rank, turn);
        float row_to = shift(s.max), inv = 1.0f / s.sum;
        for (unsigned v = first; v < end; v += threads)
            for (unsigned k = 0; k < E::PER_VEC; ++k) {
                std::uint64_t e = static_cast<std::uint64_t>(v) * E::PER_VEC + k;
                if (e < cols) y[e] = static_cast<typename E::T>(__expf(value(e) - row_to) * inv);
            }
    }
}

template <class E, Group G, unsigned L>
__device__ __forceinline__ void softmax(const typename E::T* x, typename E::T* y, unsigned rows,
                                        unsigned cols) {
    unsigned row, rank, t, threads;
    if (!seat<G>(rows, row, rank, t, threads)) return;
    if (G != Group::Cluster) return softmax_row<E, G, L>(x, y, row, rank, t, threads, cols, 0);
    start<G>();
    unsigned turn = 0;
    for (std::uint64_t r = row, stride = cluster_stride(); r < rows; r += stride, ++turn)
        softmax_row<E, G, L>(x, y, static_cast<unsigned>(r), rank, t, threads, cols, turn);
    done<G>();
}

}  // namespace rows

#define ROWS_SOFTMAX(name, E, G, L)                                                            \
    extern "C" __global__ void name(const E::T* x, const E::T*, const E::T*, E::T* y,           \
                                    unsigned rows, unsigned cols, float) {                     \
        rows::softmax<E, G, L>(x, y, rows, cols);                                              \
    }
// The block's twins held to the Rust kernels' 32 registers: two blocks of 1024 an SM.
#define ROWS_SOFTMAX_TWO_AN_SM(name, E, G, L)                                                  \
    extern "C" __global__ void __launch_bounds__(rows::BLOCK_MAX_THREADS, 2)                   \
        name(const E::T* x, const E::T*, const E::T*, E::T* y, unsigned rows, unsigned cols,   \
             float) {                                                                          \
        rows::softmax<E, G, L>(x, y, rows, cols);                                              \
    }

using rows::BF16;
using rows::F32;
using rows::Group;
ROWS_SOFTMAX(softmax_narrow_f32, F32, Group::Warp, rows::NARROW_VECTORS)
ROWS_SOFTMAX(softmax_narrow_bf16, BF16, Group::Warp, rows::NARROW_VECTORS)
ROWS_SOFTMAX(softmax_warp_f32, F32, Group::Warp, rows::WARP_VECTORS)
ROWS_SOFTMAX(softmax_warp_bf16, BF16, Group::Warp, rows::WARP_VECTORS)
ROWS_SOFTMAX_TWO_AN_SM(softmax_block_f32, F32, Group::Block, rows::BLOCK_VECTORS)
ROWS_SOFTMAX_TWO_AN_SM(softmax_block_bf16, BF16, Group::Block, rows::BLOCK_VECTORS)
ROWS_SOFTMAX(softmax_cluster_f32, F32, Group::Cluster, rows::CLUSTER_VECTORS)
ROWS_SOFTMAX(softmax_cluster_bf16, BF16, Group::Cluster, rows::CLUSTER_VECTORS)
