// Copy kernels against the driver's device-to-device copy, timed the same way in one process:
// which access pattern closes the gap between a copy kernel and cudaMemcpyAsync(D2D)?
// Plain CUDA C++ (sm_90), for the experiment log (docs/experiments.md, E11); the winner, if
// any, is then written in Rust.
//
//   copy_lab [log2n=28] [reps=20]    one CSV line per variant: name, median/min/max µs, GB/s,
//                                    ratio to the D2D copy measured in the same run
//
// Variants (each copies n floats, 16-byte aligned, n a multiple of 4096):
//   d2d         cudaMemcpyAsync device to device (the reference)
//   stream4     one wave, grid-stride float4, 4 loads in flight then 4 stores (copy_stream)
//   stream8     the same with 8 loads in flight per thread
//   flat        one float4 per thread, n/4 threads, no loop (many waves)
//   chunk       each block copies contiguous 64 KiB chunks: 16 float4 loads per thread
//               in flight, then their 16 stores (longer runs of reads, then of writes)
//   bulk        Hopper's bulk copy engine per block: cp.async.bulk global→shared (mbarrier),
//               then cp.async.bulk shared→global, 32 KiB per step, double-buffered
// and the read ceiling's two shapes (bytes read only; ratio to the D2D copy's bytes/s):
//   read_wave   one wave, grid-stride float4, 4 loads in flight (read_stream's shape)
//   read_flat   one float4 per thread, n/4 threads

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "measure.cuh"

template <int UNROLL>
__global__ void stream_copy(const float4* in, float4* out, std::uint64_t groups) {
    std::uint64_t threads = std::uint64_t(gridDim.x) * blockDim.x;
    std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * threads < groups; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = in[i + u * threads];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) out[i + u * threads] = v[u];
    }
    for (; i < groups; i += threads) out[i] = in[i];
}

__global__ void flat_copy(const float4* in, float4* out, std::uint64_t groups) {
    std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < groups) out[i] = in[i];
}

// 256 threads × 16 float4 = 64 KiB per chunk, chunks handed out grid-stride.
constexpr int CHUNK_LOADS = 16;
__global__ void chunk_copy(const float4* in, float4* out, std::uint64_t groups) {
    const std::uint64_t per_chunk = std::uint64_t(blockDim.x) * CHUNK_LOADS;
    for (std::uint64_t c = blockIdx.x; c * per_chunk < groups; c += gridDim.x) {
        std::uint64_t base = c * per_chunk + threadIdx.x;
        float4 v[CHUNK_LOADS];
#pragma unroll
        for (int u = 0; u < CHUNK_LOADS; ++u) v[u] = in[base + u * blockDim.x];
#pragma unroll
        for (int u = 0; u < CHUNK_LOADS; ++u) out[base + u * blockDim.x] = v[u];
    }
}

// Bulk copies through shared memory: thread 0 issues everything; two 32 KiB buffers so the
// next load overlaps the previous store.
constexpr unsigned BULK_BYTES = 32 * 1024;
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__global__ void bulk_copy(const char* in, char* out, std::uint64_t bytes) {
    extern __shared__ __align__(128) char buf[];  // 2 × BULK_BYTES
    __shared__ __align__(8) unsigned long long bar[2];
    if (threadIdx.x != 0) return;
    for (int b = 0; b < 2; ++b)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[b])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    unsigned phase[2] = {0, 0};
    int k = 0;
    for (std::uint64_t off = std::uint64_t(blockIdx.x) * BULK_BYTES; off < bytes;
         off += std::uint64_t(gridDim.x) * BULK_BYTES, k ^= 1) {
        char* s = buf + k * BULK_BYTES;
        // The store that last used this buffer must have read it before it is overwritten.
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
        asm volatile(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar[k])),
            "r"(BULK_BYTES)
            : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
            "[%3];" ::"r"(smem_addr(s)),
            "l"(in + off), "r"(BULK_BYTES), "r"(smem_addr(&bar[k]))
            : "memory");
        unsigned done = 0;
        while (!done) {
            asm volatile(
                "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                "selp.u32 %0, 1, 0, p; }"
                : "=r"(done)
                : "r"(smem_addr(&bar[k])), "r"(phase[k])
                : "memory");
        }
        phase[k] ^= 1;
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + off),
                     "r"(smem_addr(s)), "r"(BULK_BYTES)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// XOR of the words read; stored only if it equals `sentinel` (never, for these inputs).
__device__ __forceinline__ unsigned fold(float4 v) {
    return __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^ __float_as_uint(v.w);
}
__global__ void read_wave(const float4* in, std::uint64_t groups, unsigned sentinel, unsigned* out) {
    std::uint64_t threads = std::uint64_t(gridDim.x) * blockDim.x;
    std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * threads < groups; i += 4 * threads)
        acc ^= fold(in[i]) ^ fold(in[i + threads]) ^ fold(in[i + 2 * threads]) ^ fold(in[i + 3 * threads]);
    for (; i < groups; i += threads) acc ^= fold(in[i]);
    if (acc == sentinel) *out = acc;
}
__global__ void read_flat(const float4* in, std::uint64_t groups, unsigned sentinel, unsigned* out) {
    std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < groups && fold(in[i]) == sentinel) *out = sentinel;
}

int main(int argc, char** argv) {
    std::uint64_t n = std::uint64_t(1) << (argc > 1 ? std::atoi(argv[1]) : 28);
    int reps = argc > 2 ? std::atoi(argv[2]) : 20;
    std::uint64_t groups = n / 4;
    std::vector<float> h(n);
    for (std::uint64_t i = 0; i < n; ++i) h[i] = float((i * 2654435761u) % 1000003) * 1e-3f;
    float *in, *out;
    CHECK(cudaMalloc(&in, n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    auto wave = [&](const void* f, int threads, size_t smem) {
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, threads, smem));
        return per_sm * sms;
    };
    CHECK(cudaFuncSetAttribute(bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               2 * BULK_BYTES));
    const float4* i4 = reinterpret_cast<const float4*>(in);
    float4* o4 = reinterpret_cast<float4*>(out);
    int w4 = wave((const void*)stream_copy<4>, 256, 0), w8 = wave((const void*)stream_copy<8>, 256, 0);
    int wc = wave((const void*)chunk_copy, 256, 0), wb = wave((const void*)bulk_copy, 32, 2 * BULK_BYTES);
    struct V {
        const char* name;
        std::vector<double> us;
    };
    std::vector<V> vs;
    auto run = [&](const char* name, auto launch) {
        vs.push_back({name, time_launches(launch, out, n * 4, 0xff, reps)});
        std::vector<float> got(n);
        CHECK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
        std::uint64_t bad = 0;
        for (std::uint64_t i = 0; i < n; ++i) bad += got[i] != h[i];
        if (bad) std::fprintf(stderr, "copy_lab: %s: %llu elements wrong\n", name, (unsigned long long)bad);
    };
    run("d2d", [&] { CHECK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice)); });
    run("stream4", [&] { stream_copy<4><<<w4, 256>>>(i4, o4, groups); });
    run("stream8", [&] { stream_copy<8><<<w8, 256>>>(i4, o4, groups); });
    run("flat", [&] { flat_copy<<<unsigned((groups + 255) / 256), 256>>>(i4, o4, groups); });
    run("chunk", [&] { chunk_copy<<<wc, 256>>>(i4, o4, groups); });
    run("bulk", [&] {
        bulk_copy<<<wb, 32, 2 * BULK_BYTES>>>(reinterpret_cast<const char*>(in),
                                               reinterpret_cast<char*>(out), n * 4);
    });
    // The read shapes: half the bytes of a copy; `vs_d2d` compares bytes per second.
    unsigned* flag;
    CHECK(cudaMalloc(&flag, 4));
    int wr = wave((const void*)read_wave, 256, 0);
    vs.push_back({"read_wave", time_launches([&] { read_wave<<<wr, 256>>>(i4, groups, 0xffffffffu, flag); }, out, n * 4, 0xff, reps)});
    vs.push_back({"read_flat", time_launches([&] { read_flat<<<unsigned((groups + 255) / 256), 256>>>(i4, groups, 0xffffffffu, flag); }, out, n * 4, 0xff, reps)});
    double ref = median(vs[0].us);
    std::printf("variant,n,grid,median_us,min_us,max_us,gbps,vs_d2d\n");
    int grids[] = {0, w4, w8, int((groups + 255) / 256), wc, wb, wr, int((groups + 255) / 256)};
    for (size_t k = 0; k < vs.size(); ++k) {
        double m = median(vs[k].us);
        double bytes = k < 6 ? 8.0 * n : 4.0 * n;  // copies read and write; reads only read
        std::printf("%s,%llu,%d,%.2f,%.2f,%.2f,%.1f,%.4f\n", vs[k].name, (unsigned long long)n,
                    grids[k], m, *std::min_element(vs[k].us.begin(), vs[k].us.end()),
                    *std::max_element(vs[k].us.begin(), vs[k].us.end()), bytes / m / 1e3,
                    (bytes / m) / (8.0 * n / ref));
    }
    return 0;
}
