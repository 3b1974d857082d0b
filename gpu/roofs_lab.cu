// Candidate roofs for the rows the model misses (E17 in docs/experiments.md), each timed in
// CUDA C++ beside the kernel shape it would bound, in one process:
//
//   red-same      one red per 256-thread block to one word, f32 and i32: ns per red
//   single        one 4-byte load per thread, 256-thread blocks that retire after it
//                 (each thread compares its element with a planted key): the reductions
//                 v1–v3's loads without their tree; `pair` two loads per thread;
//                 `v1-store` v1's tree ending in a plain store, `v1-red` ending in its red
//   shared        32-bit shared loads, conflict-free (`row`) and 32-way conflicted (`column`,
//                 the tiled transpose's reads), each followed by a conflict-free store
//   tree          v1's tree alone (no global load), and empty blocks, 2^20 of each; the tree
//                 with fewer resident blocks per SM
//   latency       one block per SM: a dependent-load chase through 256 MiB (the DRAM's latency)
//                 and the trees looped (each tree's latency, fill and sum included)
//   levels        one wave looping over a barrier, a shuffle, or a tree level without its
//                 divergence, at 8 and 4 blocks per SM: SM cycles per block-level
//   tile-copy     the 32×32 transposes' DRAM order without the transposition: tile (r, c)
//                 of the input copied, row by row, to tile (c, r) of the output; beside it the
//                 padded and tiled transposes and the driver's D2D copy of the same bytes
//   slots         a 256-thread i32 reduction block's phases, each switchable (its load to
//                 shared memory and barrier, its tree: none, v1's, v3's or v3_shfl's, its end: a
//                 store or a red), at 8, 6, 4, 2 and 1 resident blocks per SM; empty blocks at
//                 the same: what a block's load costs the slots its tree would use (E18)
//   redpair       the load-only block ending in one i32 red, its reds spread over K words in
//                 distinct L2 lines (K = 1 … 64), its loads from DRAM or from a 16 MiB window
//                 the L2 holds; and f32 reds: where an i32 red behind a load spends 1.13 ns (E18)
//
//   roofs_lab [reps=20] [experiment]   CSV: experiment,size,variant,median_us,min_us,max_us,rate
//   (every experiment when none is named)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "measure.cuh"

constexpr unsigned BLOCK = 256;

template <typename T>
__global__ void red_same(T* out) {
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(out, T(1));
}

// LOADS elements per thread, strided by the block; the thread holding `key` writes its index.
template <int LOADS>
__global__ void single(const int* in, unsigned long long n, int key, unsigned long long* flag) {
    unsigned long long base = (unsigned long long)blockIdx.x * BLOCK * LOADS + threadIdx.x;
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < n && in[i] == key) *flag = i;
    }
}

// The chapter's v1 (interleaved tree), i32, ending in a plain store of the block's sum or in
// one red to `out[0]`.
template <bool RED>
__global__ void v1(const int* in, unsigned long long n, int* out) {
    __shared__ int s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned long long i = (unsigned long long)blockIdx.x * BLOCK + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (t % (2 * stride) == 0) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) {
        if (RED) atomicAdd(out, s[0]);
        else out[blockIdx.x] = s[0];
    }
}

// 256 threads; a 32×32 tile of 32-bit words per block. Each step, warp w's lanes load word
// (lane * 32 + step) of the tile (COLUMN: one bank, 32 wavefronts) or (step * 32 + lane)
// (a row: one wavefront), then store it to the thread's own word (one wavefront).
template <bool COLUMN>
__global__ void shared_rate(unsigned trips, unsigned* out) {
    __shared__ unsigned tile[1024];
    __shared__ unsigned mine[BLOCK];
    unsigned t = threadIdx.x, lane = t % 32;
    for (unsigned k = t; k < 1024; k += BLOCK) tile[k] = k * 0x9E3779B9u + blockIdx.x;
    __syncthreads();
    volatile unsigned* vt = tile;
    volatile unsigned* vm = mine;
    unsigned sum = 0;
    for (unsigned r = 0; r < trips; ++r) {
#pragma unroll
        for (unsigned step = 0; step < 32; ++step) {
            unsigned v = COLUMN ? vt[lane * 32 + step] : vt[step * 32 + lane];
            vm[t] = v;
            sum += v;
        }
    }
    out[blockIdx.x * BLOCK + t] = sum;
}

// Block (32, 8) copies input tile (by, bx) to output tile (bx, by) without transposing it:
// the four loads first, then the four stores, as the padded transpose orders them.
__global__ void tile_copy(const float* in, float* out, unsigned n) {
    unsigned x = blockIdx.x * 32 + threadIdx.x;
    float v[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) v[k] = in[(size_t)(blockIdx.y * 32 + threadIdx.y + 8 * k) * n + x];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k)
        out[(size_t)(blockIdx.x * 32 + threadIdx.y + 8 * k) * n + blockIdx.y * 32 + threadIdx.x] = v[k];
}

// The chapter's tiled transpose (no padding: its column reads are 32-way conflicted).
__global__ void tiled(const float* in, float* out, unsigned n) {
    __shared__ float tile[32][32];
    unsigned x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (unsigned j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (unsigned j = 0; j < 32; j += 8) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// v1's tree on values the block makes itself (no global load), ending in a plain store; and
// blocks that only store their index (the block scheduler's rate).
__global__ void tree_only(int* out) {
    __shared__ int s[BLOCK];
    unsigned t = threadIdx.x;
    s[t] = (int)(t ^ blockIdx.x);
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (t % (2 * stride) == 0) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// One wave of blocks, each `trips` × (one barrier) or × (one shuffle level per warp), or ×
// (a tree level without divergence: store, barrier, load a neighbour's word, add): what one
// SM sustains of each, whatever the tree around it.
template <int WHAT>
__global__ void level_loop(unsigned trips, unsigned* out) {
    __shared__ unsigned s[BLOCK];
    unsigned t = threadIdx.x, x = t ^ blockIdx.x;
    for (unsigned r = 0; r < trips; ++r) {
        if (WHAT == 0) {
            __syncthreads();
            x = x * 3u + 1u;
        } else if (WHAT == 1) {
            x += __shfl_down_sync(0xffffffffu, x, 1);
        } else {
            s[t] = x;
            __syncthreads();
            x += s[(t + 32) % BLOCK];
            __syncthreads();
        }
    }
    out[blockIdx.x * BLOCK + t] = x;
}

// Latencies, one block per SM: a single thread chasing a random cycle through a buffer four
// times the L2 (each load's address is the previous load's value), and the reductions' trees
// looped, each trip filling the tree and waiting for its sum.
__global__ void chase(const unsigned* next, unsigned steps, unsigned* out) {
    if (threadIdx.x != 0) return;
    unsigned i = blockIdx.x * 7919u;
    for (unsigned k = 0; k < steps; ++k) i = next[i];
    out[blockIdx.x] = i;
}

template <int TREE>
__global__ void tree_loop(unsigned trips, int* out) {
    __shared__ int s[BLOCK];
    unsigned t = threadIdx.x;
    int acc = 0;
    for (unsigned r = 0; r < trips; ++r) {
        s[t] = (int)(t ^ r);
        __syncthreads();
        if (TREE == 1) {
            for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
                if (t % (2 * stride) == 0) s[t] += s[t + stride];
                __syncthreads();
            }
        } else {
            unsigned stop = TREE == 3 ? 1 : 64;
            for (unsigned stride = BLOCK / 2; stride >= stop; stride >>= 1) {
                if (t < stride) s[t] += s[t + stride];
                __syncthreads();
            }
            if (TREE == 5 && t < 32) {
                int v = s[t] + s[t + 32];
                for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
                if (t == 0) s[0] = v;
            }
            if (TREE == 5) __syncthreads();
        }
        acc += s[0];
        __syncthreads();
    }
    out[blockIdx.x * BLOCK + t] = acc;
}

__global__ void empty(int* out) {
    if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
}

__global__ void empty_bar(int* out) {
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
}

// A reduction block of 256 threads, i32, its phases switchable. LOAD: s[t] = in[i] and a
// barrier (v1–v3 and v3_shfl), or s[t] from the thread's index (the tree roofs). TREE 0: no
// tree, each thread compares its neighbour's word with the key (so every load is waited for
// after the barrier); 1: v1's; 3: v3's; 5: v3's down to 64 values, then warp 0's shuffles
// (v3_shfl's). RED: thread 0 adds the sum to out[0], else stores it to out[block].
template <int LOAD, int TREE, int RED>
__global__ void phases(const int* in, int key, int* out, unsigned long long* flag) {
    __shared__ int s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned long long i = (unsigned long long)blockIdx.x * BLOCK + t;
    s[t] = LOAD ? in[i] : (int)(t ^ blockIdx.x);
    __syncthreads();
    if (TREE == 0) {
        if (s[(t + 1) % BLOCK] == key) *flag = i;
    } else if (TREE == 1) {
        for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
            if (t % (2 * stride) == 0) s[t] += s[t + stride];
            __syncthreads();
        }
    } else {
        for (unsigned stride = BLOCK / 2; stride >= (TREE == 3 ? 1u : 64u); stride >>= 1) {
            if (t < stride) s[t] += s[t + stride];
            __syncthreads();
        }
        if (TREE == 5 && t < 32) {
            int v = s[t] + s[t + 32];
            for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
            if (t == 0) s[0] = v;
        }
    }
    if (t == 0) {
        if (RED) atomicAdd(out, s[0]);
        else out[blockIdx.x] = s[0];
    }
}

// The load-only block (LOAD 1, TREE 0 of `phases`) ending in one red of T to word
// (block % spread) · STRIDE of `out`; its loads from in[i % window] (window = n: no reuse).
constexpr unsigned RED_STRIDE = 4096 + 32;  // words between the spread words: other lines
template <typename T>
__global__ void load_red(const int* in, unsigned long long window, int key, T* out, unsigned spread,
                         unsigned long long* flag) {
    __shared__ int s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned long long i = (unsigned long long)blockIdx.x * BLOCK + t;
    s[t] = in[i % window];
    __syncthreads();
    if (s[(t + 1) % BLOCK] == key) *flag = i;
    if (t == 0) atomicAdd(out + (size_t)(blockIdx.x % spread) * RED_STRIDE, T(1));
}

// The chapter's padded transpose, for the comparison in the same process.
__global__ void padded(const float* in, float* out, unsigned n) {
    __shared__ float tile[32][33];
    unsigned x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (unsigned j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (unsigned j = 0; j < 32; j += 8) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// The key the searches plant, and n pseudo-random ints in 0..999 (never the key).
constexpr int KEY = 123456789;
static std::vector<int> random_ints(unsigned long long n) {
    std::vector<int> h(n);
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (auto& v : h) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        v = (int)(s % 1000);
    }
    return h;
}

// A device copy of `h`.
static int* to_device(const std::vector<int>& h) {
    int* d;
    CHECK(cudaMalloc(&d, h.size() * 4));
    CHECK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    return d;
}

static void row(const char* exp, const std::string& size, const char* variant,
                const std::vector<double>& us, const std::string& rate) {
    auto mm = std::minmax_element(us.begin(), us.end());
    std::printf("%s,%s,%s,%.2f,%.2f,%.2f,%s\n", exp, size.c_str(), variant, median(us), *mm.first,
                *mm.second, rate.c_str());
    std::fflush(stdout);
}

static std::string fmt(const char* f, double x) {
    char b[64];
    std::snprintf(b, sizeof b, f, x);
    return b;
}

int main(int argc, char** argv) {
    int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    std::string only = argc > 2 ? argv[2] : "";
    auto want = [&](const char* experiment) { return only.empty() || only == experiment; };
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    std::printf("# %s, %d SMs, clock attribute %d MHz\n", prop.name, prop.multiProcessorCount,
                clock_khz / 1000);
    std::printf("experiment,size,variant,median_us,min_us,max_us,rate\n");
    // The occupancy variants ask for more than the default 48 KiB of dynamic shared memory.
    CHECK(cudaFuncSetAttribute(tree_only, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    CHECK(cudaFuncSetAttribute(v1<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    CHECK(cudaFuncSetAttribute(level_loop<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    CHECK(cudaFuncSetAttribute(level_loop<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    CHECK(cudaFuncSetAttribute(level_loop<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));

    // red-same: 2^20 blocks.
    if (want("red-same")) {
        const unsigned blocks = 1u << 20;
        void* out;
        CHECK(cudaMalloc(&out, 256));
        auto f = time_launches([&] { red_same<float><<<blocks, BLOCK>>>((float*)out); }, out, 4, 0, reps);
        float fv;
        CHECK(cudaMemcpy(&fv, out, 4, cudaMemcpyDeviceToHost));
        row("red-same", "2^20", "f32", f, fmt("%.3f ns per red", median(f) * 1e3 / blocks) + (fv == blocks ? "" : " WRONG"));
        auto i = time_launches([&] { red_same<int><<<blocks, BLOCK>>>((int*)out); }, out, 4, 0, reps);
        int iv;
        CHECK(cudaMemcpy(&iv, out, 4, cudaMemcpyDeviceToHost));
        row("red-same", "2^20", "i32", i, fmt("%.3f ns per red", median(i) * 1e3 / blocks) + (iv == (int)blocks ? "" : " WRONG"));
        CHECK(cudaFree(out));
    }

    // single, v1: i32 at 2^24 … 2^30.
    if (want("single")) {
        const unsigned long long most = 1ull << 30;
        std::vector<int> h = random_ints(most);
        const int key = KEY;
        int* in = to_device(h);
        unsigned long long* flag;
        int* out;
        CHECK(cudaMalloc(&flag, 8));
        CHECK(cudaMalloc(&out, (most / BLOCK) * 4));
        for (int lg : {24, 26, 28, 30}) {
            unsigned long long n = 1ull << lg, at = n / 3 + 7;
            CHECK(cudaMemcpy(in + at, &key, 4, cudaMemcpyHostToDevice));
            std::string size = "2^" + std::to_string(lg);
            unsigned blocks = (unsigned)(n / BLOCK);
            auto per_block = [&](const std::vector<double>& us, unsigned b) {
                return fmt("%.3f ns per block", median(us) * 1e3 / b) + fmt(" %.0f GB/s", n * 4 / median(us) / 1e3);
            };
            auto a = time_launches([&] { single<1><<<blocks, BLOCK>>>(in, n, key, flag); }, flag, 8, 0, reps);
            unsigned long long got;
            CHECK(cudaMemcpy(&got, flag, 8, cudaMemcpyDeviceToHost));
            row("single", size, "one", a, per_block(a, blocks) + (got == at ? "" : " WRONG"));
            auto b = time_launches([&] { single<2><<<blocks / 2, BLOCK>>>(in, n, key, flag); }, flag, 8, 0, reps);
            CHECK(cudaMemcpy(&got, flag, 8, cudaMemcpyDeviceToHost));
            row("single", size, "pair", b, per_block(b, blocks / 2) + (got == at ? "" : " WRONG"));
            auto c = time_launches([&] { v1<false><<<blocks, BLOCK>>>(in, n, out); }, out, 4, 0, reps);
            row("single", size, "v1-store", c, per_block(c, blocks));
            auto d = time_launches([&] { v1<true><<<blocks, BLOCK>>>(in, n, out); }, out, 4, 0, reps);
            row("single", size, "v1-red", d, per_block(d, blocks));
            if (lg == 28) {
                // v1 with 4 resident blocks per SM (unused dynamic shared memory), as the tree.
                size_t extra = 228 * 1024 / 4 - 2048;
                auto q = time_launches([&] { v1<false><<<blocks, BLOCK, extra>>>(in, n, out); }, out, 4, 0, reps);
                row("single", size, "v1-store-4-per-SM", q, per_block(q, blocks));
            }
            int was = h[at];  // the element the key replaced
            CHECK(cudaMemcpy(in + at, &was, 4, cudaMemcpyHostToDevice));
        }
        CHECK(cudaFree(in));
        CHECK(cudaFree(flag));
        CHECK(cudaFree(out));
    }

    // tree: v1's tree alone and empty blocks, 2^20 blocks.
    if (want("tree")) {
        const unsigned blocks = 1u << 20;
        int* out;
        CHECK(cudaMalloc(&out, blocks * 4));
        auto t = time_launches([&] { tree_only<<<blocks, BLOCK>>>(out); }, out, 4, 0, reps);
        row("tree", "2^20 blocks", "v1-tree", t, fmt("%.3f ns per block", median(t) * 1e3 / blocks));
        auto e = time_launches([&] { empty<<<blocks, BLOCK>>>(out); }, out, 4, 0, reps);
        row("tree", "2^20 blocks", "empty", e, fmt("%.3f ns per block", median(e) * 1e3 / blocks));
        // Empty blocks that hold shared memory (dynamic, unused), and ones that also wait at a
        // barrier: what the block scheduler costs a block of v1's shape.
        for (size_t shared : {1024, 4096}) {
            auto es = time_launches([&] { empty<<<blocks, BLOCK, shared>>>(out); }, out, 4, 0, reps);
            std::string v = "empty-" + std::to_string(shared) + "B-shared";
            row("tree", "2^20 blocks", v.c_str(), es, fmt("%.3f ns per block", median(es) * 1e3 / blocks));
        }
        auto eb = time_launches([&] { empty_bar<<<blocks, BLOCK, 1024>>>(out); }, out, 4, 0, reps);
        row("tree", "2^20 blocks", "empty-1024B-shared-barrier", eb, fmt("%.3f ns per block", median(eb) * 1e3 / blocks));
        // Fewer resident blocks (unused dynamic shared memory: 228 KiB / (extra + 1 KiB)): a
        // tree bound by its latency slows in proportion, one bound by a throughput does not.
        for (int resident : {6, 4}) {
            int per_sm = 0;
            size_t extra = (size_t)(228 * 1024 / resident) - 1024 - 1024;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tree_only, BLOCK, extra));
            auto r = time_launches([&] { tree_only<<<blocks, BLOCK, extra>>>(out); }, out, 4, 0, reps);
            std::string v = "v1-tree-" + std::to_string(per_sm) + "-per-SM";
            row("tree", "2^20 blocks", v.c_str(), r, fmt("%.3f ns per block", median(r) * 1e3 / blocks));
        }
        CHECK(cudaFree(out));
    }

    // levels: one wave of 8 blocks per SM (and 4, through unused dynamic shared memory).
    if (want("levels")) {
        const unsigned trips = 4096;
        unsigned* out;
        CHECK(cudaMalloc(&out, (size_t)prop.multiProcessorCount * 8 * BLOCK * 4));
        const char* names[3] = {"barrier", "shuffle", "store-bar-load-bar"};
        for (int what = 0; what < 3; ++what) {
            for (int per_sm : {8, 4}) {
                unsigned blocks = prop.multiProcessorCount * per_sm;
                size_t extra = per_sm == 8 ? 0 : 228 * 1024 / 4 - 4096;
                auto launch = [&] {
                    if (what == 0) level_loop<0><<<blocks, BLOCK, extra>>>(trips, out);
                    else if (what == 1) level_loop<1><<<blocks, BLOCK, extra>>>(trips, out);
                    else level_loop<2><<<blocks, BLOCK, extra>>>(trips, out);
                };
                auto us = time_launches(launch, out, 4, 0, reps);
                // Per SM: one block-level (8 warps) every this many cycles.
                double per_level_ns = median(us) * 1e3 / ((double)blocks * trips) * prop.multiProcessorCount;
                std::string v = std::string(names[what]) + "-" + std::to_string(per_sm) + "-per-SM";
                row("levels", "4096 trips", v.c_str(), us,
                    fmt("%.2f SM cycles per block-level", per_level_ns * clock_khz / 1e6));
            }
        }
        CHECK(cudaFree(out));
    }

    // latency: one block per SM.
    if (want("latency")) {
        const unsigned n = 1u << 26, steps = 4096, blocks = prop.multiProcessorCount;
        std::vector<unsigned> next(n);
        for (unsigned k = 0; k < n; ++k) next[k] = k;
        uint64_t s = 0x9E3779B97F4A7C15ull;
        for (unsigned k = n - 1; k > 0; --k) {  // Sattolo: one cycle through every index
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            unsigned j = (unsigned)(s % k);
            std::swap(next[k], next[j]);
        }
        unsigned *dnext, *dout;
        CHECK(cudaMalloc(&dnext, (size_t)n * 4));
        CHECK(cudaMalloc(&dout, blocks * BLOCK * 4));
        CHECK(cudaMemcpy(dnext, next.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
        auto c = time_launches([&] { chase<<<blocks, 32>>>(dnext, steps, dout); }, dout, 4, 0, reps);
        row("latency", "2^26 u32", "chase-1-per-SM", c, fmt("%.1f ns per dependent load", median(c) * 1e3 / steps));
        const unsigned trips = 2048;
        const char* names[3] = {"tree-v1", "tree-v3", "tree-v5"};
        for (int w = 0; w < 3; ++w) {
            auto us = time_launches([&] {
                if (w == 0) tree_loop<1><<<blocks, BLOCK>>>(trips, (int*)dout);
                else if (w == 1) tree_loop<3><<<blocks, BLOCK>>>(trips, (int*)dout);
                else tree_loop<5><<<blocks, BLOCK>>>(trips, (int*)dout);
            }, dout, 4, 0, reps);
            std::string v = std::string(names[w]) + "-1-per-SM";
            row("latency", "2048 trips", v.c_str(), us, fmt("%.1f ns per trip", median(us) * 1e3 / trips));
        }
        CHECK(cudaFree(dnext));
        CHECK(cudaFree(dout));
    }

    // shared: one wave of 8 blocks per SM, 256 trips of 32 steps.
    if (want("shared")) {
        const unsigned blocks = prop.multiProcessorCount * 8, trips = 256;
        unsigned* out;
        CHECK(cudaMalloc(&out, blocks * BLOCK * 4));
        for (int column = 0; column < 2; ++column) {
            auto us = time_launches([&] {
                if (column) shared_rate<true><<<blocks, BLOCK>>>(trips, out);
                else shared_rate<false><<<blocks, BLOCK>>>(trips, out);
            }, out, 4, 0, reps);
            double waves = (double)blocks * 8 * trips * 32 * (column ? 33 : 2);
            double per_sm_clk = waves / (median(us) * 1e-6) / prop.multiProcessorCount / (clock_khz * 1e3);
            row("shared", "one-wave", column ? "column" : "row", us,
                fmt("%.1f G wavefronts/s", waves / median(us) / 1e3) + fmt(" %.3f per SM per clock attribute", per_sm_clk));
        }
        CHECK(cudaFree(out));
    }

    // slots: 2^28 i32 (2^20 blocks of 256), each phase mix at 8, 6, 4, 2, 1 resident blocks
    // per SM (unused dynamic shared memory: 228 KiB / R less the static 1 KiB and the 1 KiB
    // the SM reserves per block).
    if (want("slots")) {
        const unsigned long long n = 1ull << 28;
        const unsigned blocks = (unsigned)(n / BLOCK);
        int* in = to_device(random_ints(n));
        int* out;
        unsigned long long* flag;
        CHECK(cudaMalloc(&out, blocks * 4));
        CHECK(cudaMalloc(&flag, 8));
        using Phases = void (*)(const int*, int, int*, unsigned long long*);
        // [red][load][tree 0, 1, 3, 5]
        Phases table[2][2][4] = {
            {{phases<0, 0, 0>, phases<0, 1, 0>, phases<0, 3, 0>, phases<0, 5, 0>},
             {phases<1, 0, 0>, phases<1, 1, 0>, phases<1, 3, 0>, phases<1, 5, 0>}},
            {{phases<0, 0, 1>, phases<0, 1, 1>, phases<0, 3, 1>, phases<0, 5, 1>},
             {phases<1, 0, 1>, phases<1, 1, 1>, phases<1, 3, 1>, phases<1, 5, 1>}}};
        for (auto& by_red : table)
            for (auto& by_load : by_red)
                for (Phases k : by_load)
                    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 226 * 1024));
        CHECK(cudaFuncSetAttribute(empty, cudaFuncAttributeMaxDynamicSharedMemorySize, 226 * 1024));
        const char* trees[4] = {"none", "v1", "v3", "v3_shfl"};
        auto per_block = [&](const std::vector<double>& us, int resident) {
            double ns = median(us) * 1e3 / blocks;
            // Little's law: a block's time resident = slots × time per block.
            return fmt("%.3f ns per block", ns) +
                   fmt(" %.0f ns resident", ns * resident * prop.multiProcessorCount);
        };
        for (int want_resident : {8, 6, 4, 2, 1}) {
            size_t extra = want_resident == 8 ? 0 : (size_t)(228 * 1024 / want_resident) - 2048;
            int resident = 0;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, table[0][1][1], BLOCK, extra));
            std::string per_sm = "-" + std::to_string(resident) + "-per-SM";
            for (int red = 0; red < 2; ++red)
                for (int load = 0; load < 2; ++load)
                    for (int tree = 0; tree < 4; ++tree) {
                        if (red && want_resident != 8) continue;
                        Phases k = table[red][load][tree];
                        auto us = time_launches([&] { k<<<blocks, BLOCK, extra>>>(in, KEY, out, flag); }, out, 4, 0, reps);
                        std::string v = std::string(load ? "load-" : "noload-") + trees[tree] +
                                        (red ? "-red" : "-store") + per_sm;
                        row("slots", "2^28 i32", v.c_str(), us, per_block(us, resident));
                    }
            int empty_resident = 0;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&empty_resident, empty, BLOCK, extra));
            auto e = time_launches([&] { empty<<<blocks, BLOCK, extra>>>(out); }, out, 4, 0, reps);
            row("slots", "2^28 i32", ("empty-" + std::to_string(empty_resident) + "-per-SM").c_str(), e,
                per_block(e, empty_resident));
        }
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
        CHECK(cudaFree(flag));
    }

    // redpair: 2^28 i32 loads (2^20 blocks), each block's red to one of `spread` words.
    if (want("redpair")) {
        const unsigned long long n = 1ull << 28;
        const unsigned blocks = (unsigned)(n / BLOCK);
        int* in = to_device(random_ints(n));
        void* out;
        unsigned long long* flag;
        const size_t out_bytes = (size_t)64 * RED_STRIDE * 4;
        CHECK(cudaMalloc(&out, out_bytes));
        CHECK(cudaMalloc(&flag, 8));
        const unsigned long long l2_window = 1ull << 22;  // 16 MiB of i32: the L2 holds it
        for (unsigned long long window : {n, l2_window}) {
            const char* from = window == n ? "dram" : "l2";
            for (unsigned spread : {1u, 2u, 4u, 8u, 64u}) {
                auto us = time_launches([&] { load_red<int><<<blocks, BLOCK>>>(in, window, KEY, (int*)out, spread, flag); },
                                        out, out_bytes, 0, reps);
                std::vector<int> o(64 * RED_STRIDE);
                CHECK(cudaMemcpy(o.data(), out, out_bytes, cudaMemcpyDeviceToHost));
                long long total = 0;
                for (unsigned k = 0; k < spread; ++k) total += o[(size_t)k * RED_STRIDE];
                std::string v = std::string("i32-") + from + "-" + std::to_string(spread) + "-words";
                row("redpair", "2^28 i32", v.c_str(), us,
                    fmt("%.3f ns per block", median(us) * 1e3 / blocks) + (total == blocks ? "" : " WRONG"));
            }
            for (unsigned spread : {1u, 8u}) {
                auto us = time_launches([&] { load_red<float><<<blocks, BLOCK>>>(in, window, KEY, (float*)out, spread, flag); },
                                        out, out_bytes, 0, reps);
                std::string v = std::string("f32-") + from + "-" + std::to_string(spread) + "-words";
                row("redpair", "2^28 i32", v.c_str(), us, fmt("%.3f ns per block", median(us) * 1e3 / blocks));
            }
        }
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
        CHECK(cudaFree(flag));
    }

    // tile-copy: 4096², 8192², 16384².
    for (unsigned n : {4096u, 8192u, 16384u}) {
        if (!want("tile-copy")) break;
        size_t bytes = (size_t)n * n * 4;
        std::vector<float> h((size_t)n * n);
        for (size_t k = 0; k < h.size(); ++k) h[k] = (float)(k % 9973);
        float *in, *out;
        CHECK(cudaMalloc(&in, bytes));
        CHECK(cudaMalloc(&out, bytes));
        CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
        std::string size = std::to_string(n) + "x" + std::to_string(n);
        dim3 grid(n / 32, n / 32), block(32, 8);
        for (int round = 0; round < 2; ++round) {
            auto d2d = time_launches([&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); }, out, bytes, 0xff, reps);
            auto tc = time_launches([&] { tile_copy<<<grid, block>>>(in, out, n); }, out, bytes, 0xff, reps);
            std::vector<float> o((size_t)n * n);
            CHECK(cudaMemcpy(o.data(), out, bytes, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (unsigned r = 0; r < n; r += 7)
                for (unsigned c = 0; c < n; ++c) {
                    // out[(tc*32 + j) * n + tr*32 + i] = in[(tr*32 + j) * n + tc*32 + i]
                    unsigned tr = r / 32, j = r % 32, tcol = c / 32, i = c % 32;
                    if (o[(size_t)(tcol * 32 + j) * n + tr * 32 + i] != h[(size_t)r * n + c]) ++bad;
                }
            auto pd = time_launches([&] { padded<<<grid, block>>>(in, out, n); }, out, bytes, 0xff, reps);
            auto td = time_launches([&] { tiled<<<grid, block>>>(in, out, n); }, out, bytes, 0xff, reps);
            const char* mark = round ? "#2" : "";
            row("tile-copy", size, (std::string("d2d") + mark).c_str(), d2d, fmt("%.0f GB/s", 2.0 * bytes / median(d2d) / 1e3));
            row("tile-copy", size, (std::string("tile_copy") + mark).c_str(), tc,
                fmt("%.3f x d2d", median(d2d) / median(tc)) + (bad ? " WRONG" : ""));
            row("tile-copy", size, (std::string("padded") + mark).c_str(), pd, fmt("%.3f x d2d", median(d2d) / median(pd)));
            row("tile-copy", size, (std::string("tiled") + mark).c_str(), td, fmt("%.3f x d2d", median(d2d) / median(td)));
        }
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
    }
    return 0;
}
