// A held-out corpus for the diagnosis: CUDA C++ kernels not written for its rules, one planted
// fault per kernel beside its fixed twin (one change apart), and healthy controls, in shapes
// other than gpu/faults_lab.cu's. gpu/corpus/cuda_corpus.truth.csv states each kernel's truth
// from its mechanism; gpu/corpus/README.md says how the truths were set.
//
//   cuda_corpus [reps=20] [--profile] [--only NAME[,NAME...]]
//
// Timed (default): each kernel 3 warm-up launches, then `reps` launches timed by CUDA events
// (the output poisoned, or zeroed where the kernel accumulates into it, before every launch,
// outside the events), then the last launch's output checked against a CPU reference; the
// read-stream and device-to-device-copy ceilings are timed in the same run.
// --profile: each kernel launched once between cudaProfilerStart and cudaProfilerStop, so
// `ncu --profile-from-start off` captures exactly one launch per kernel, and that launch checked.
//
// CSV on stdout: kernel,reps,median_us,min_us,max_us,min_bytes,check. `min_bytes` is what the
// kernel must move to or from DRAM at least (its inputs read once, its outputs written once);
// `check` is `ok` or what was wrong. Exit status 1 if any check failed.
#include <cuda_profiler_api.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "../measure.cuh"
#include "cuda_corpus_kernels.cuh"

struct Runner {
    int reps = 20;
    bool profile = false;
    std::vector<std::string> only;
    bool failed = false;
    int sms = 0;

    bool wanted(const std::string& name) const {
        if (only.empty()) return true;
        for (const std::string& o : only)
            if (name.find(o) != std::string::npos) return true;
        return false;
    }
    bool any(std::initializer_list<const char*> names) const {
        for (const char* n : names)
            if (wanted(n)) return true;
        return false;
    }

    // Timed: 3 warm-ups, then `reps` launches between events, `reset` (the output poisoned or
    // zeroed) before each, outside the events. Profiled: `reset`, then one launch between
    // cudaProfilerStart and cudaProfilerStop. Either way the last launch's output is checked.
    template <typename L, typename R, typename C>
    void run(const char* name, double min_bytes, L launch, R reset, C check) {
        if (!wanted(name)) return;
        std::vector<double> us;
        if (profile) {
            reset();
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaProfilerStart());
            launch();
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaProfilerStop());
        } else {
            cudaEvent_t a, b;
            CHECK(cudaEventCreate(&a));
            CHECK(cudaEventCreate(&b));
            for (int r = -3; r < reps; ++r) {
                reset();
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
        }
        std::string verdict = check();
        // A ceiling checks nothing: its verdict names what it is.
        if (verdict != "ok" && verdict != "ceiling") failed = true;
        if (us.empty())
            std::printf("%s,0,,,,%.0f,%s\n", name, min_bytes, verdict.c_str());
        else
            std::printf("%s,%zu,%.2f,%.2f,%.2f,%.0f,%s\n", name, us.size(), median(us),
                        *std::min_element(us.begin(), us.end()),
                        *std::max_element(us.begin(), us.end()), min_bytes, verdict.c_str());
        std::fflush(stdout);
    }
};

template <typename T>
static T* dev_alloc(size_t n) {
    T* p;
    CHECK(cudaMalloc(&p, n * sizeof(T)));
    return p;
}
static float* dev_uniform(size_t n, uint32_t seed, float lo, float hi) {
    float* p = dev_alloc<float>(n);
    fill_uniform<<<4096, 256>>>(p, n, seed, lo, hi);
    CHECK(cudaGetLastError());
    return p;
}
template <typename T>
static std::vector<T> back(const T* d, size_t n, size_t offset = 0) {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d + offset, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}
static auto poison(void* p, size_t bytes) {
    return [=] { CHECK(cudaMemsetAsync(p, 0xff, bytes)); };
}
static auto zero(void* p, size_t bytes) {
    return [=] { CHECK(cudaMemsetAsync(p, 0, bytes)); };
}

static std::string mismatch(const char* what, size_t at, double got, double want) {
    char b[160];
    std::snprintf(b, sizeof b, "%s %zu: got %.9g want %.9g", what, at, got, want);
    return b;
}
// |got - want| <= tol * scale (scale: the magnitude the error is relative to).
static bool near(double got, double want, double tol, double scale) {
    return std::isfinite(got) && std::fabs(got - want) <= tol * scale;
}
// An even sample of `count` indices in [0, n).
static std::vector<size_t> sample(size_t n, size_t count) {
    std::vector<size_t> s;
    for (size_t k = 0; k < count; ++k)
        s.push_back((size_t)((double)k * n / count) + (k * 7919) % std::max<size_t>(1, n / count));
    return s;
}
static double uniform_sum(uint32_t seed, size_t n, float lo, float hi, bool squares = false) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
        double v = uniform(seed, i, lo, hi);
        s += squares ? v * v : v;
    }
    return s;
}

// ---- the groups: each allocates its buffers, runs its kernels, frees them ----

static void ceilings(Runner& r) {
    if (r.profile || !r.any({"ceiling_read_1gib", "ceiling_d2d_copy_1gib"})) return;
    const size_t n = size_t(1) << 28;  // 1 GiB of floats
    float* in = dev_uniform(n, 100, -1, 1);
    float* out = dev_alloc<float>(n);
    int* scratch = dev_alloc<int>(1);
    r.run(
        "ceiling_read_1gib", n * 4.0,
        [&] {
            read_ceiling<<<r.sms * 8, 256>>>(reinterpret_cast<const int4*>(in), n / 4, scratch);
        },
        [] {}, [] { return std::string("ceiling"); });
    r.run(
        "ceiling_d2d_copy_1gib", n * 8.0,
        [&] { CHECK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice)); }, [] {},
        [] { return std::string("ceiling"); });
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(scratch));
}

static void waste(Runner& r) {
    if (r.any({"seg8_sum_float2", "seg8_sum_coalesced"})) {
        const size_t n = size_t(1) << 27, segs = n / 8;  // 512 MiB in, 64 MiB out
        float* in = dev_uniform(n, 1, -1, 1);
        float* out = dev_alloc<float>(segs);
        auto check = [&] {
            std::vector<float> o = back(out, segs);
            for (size_t s : sample(segs, 4096)) {
                float f[8];
                for (int k = 0; k < 8; ++k) f[k] = uniform(1, 8 * s + k, -1, 1);
                float want = ((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]));
                if (o[s] != want) return mismatch("segment", s, o[s], want);
            }
            return std::string("ok");
        };
        double bytes = (n + segs) * 4.0;
        r.run(
            "seg8_sum_float2", bytes,
            [&] {
                seg8_sum_float2<<<segs / 256, 256>>>(reinterpret_cast<const float2*>(in), out,
                                                     segs);
            },
            poison(out, segs * 4), check);
        r.run(
            "seg8_sum_coalesced", bytes,
            [&] {
                seg8_sum_coalesced<<<segs / 256, 256>>>(reinterpret_cast<const float4*>(in), out,
                                                        segs);
            },
            poison(out, segs * 4), check);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
    }
    if (r.any({"bn_affine_nchw"})) {
        const unsigned n = BN_N * BN_C * BN_HW, n4 = n / 4;  // 257 MB in, 257 MB out
        float* x = dev_uniform(n, 2, -1, 1);
        float* gamma = dev_uniform(BN_C, 3, 0.5f, 1.5f);
        float* beta = dev_uniform(BN_C, 4, -0.5f, 0.5f);
        float* y = dev_alloc<float>(n);
        r.run(
            "bn_affine_nchw", n * 8.0,
            [&] {
                bn_affine_nchw<<<(n4 + 255) / 256, 256>>>(reinterpret_cast<const float4*>(x), gamma,
                                                          beta, reinterpret_cast<float4*>(y), n4);
            },
            poison(y, (size_t)n * 4),
            [&] {
                std::vector<float> o = back(y, n);
                for (size_t i : sample(n, 4096)) {
                    unsigned c = (unsigned)(i / BN_HW) % BN_C;
                    float want = fmaf(uniform(2, i, -1, 1), uniform(3, c, 0.5f, 1.5f),
                                      uniform(4, c, -0.5f, 0.5f));
                    if (o[i] != want) return mismatch("element", i, o[i], want);
                }
                return std::string("ok");
            });
        CHECK(cudaFree(x));
        CHECK(cudaFree(gamma));
        CHECK(cudaFree(beta));
        CHECK(cudaFree(y));
    }
    if (r.any({"aos_mass_field", "soa_mass_field"})) {
        const size_t n = size_t(1) << 26;  // 2 GiB of particles, 256 MiB of masses
        float* aos = dev_uniform(n * 8, 5, 0.5f, 2.0f);
        float* mass = dev_alloc<float>(n);
        // The structure of arrays holds the same masses (field 6 of each particle).
        aos_mass_field<<<n / 256, 256>>>(reinterpret_cast<const Particle*>(aos), mass, n, 1.0f);
        float* out = dev_alloc<float>(n);
        auto check = [&] {
            std::vector<float> o = back(out, n);
            for (size_t i : sample(n, 4096)) {
                float want = uniform(5, 8 * i + 6, 0.5f, 2.0f) * 0.5f;
                if (o[i] != want) return mismatch("particle", i, o[i], want);
            }
            return std::string("ok");
        };
        r.run(
            "aos_mass_field", n * 8.0,
            [&] {
                aos_mass_field<<<n / 256, 256>>>(reinterpret_cast<const Particle*>(aos), out, n,
                                                 0.5f);
            },
            poison(out, n * 4), check);
        r.run(
            "soa_mass_field", n * 8.0,
            [&] { soa_mass_field<<<n / 256, 256>>>(mass, out, n, 0.5f); }, poison(out, n * 4),
            check);
        CHECK(cudaFree(aos));
        CHECK(cudaFree(mass));
        CHECK(cudaFree(out));
    }
}

static void gemms(Runner& r) {
    if (!r.any({"sgemm_smem_4x2", "gemm_bf16_mma"})) return;
    const int M = 4096, N = 4096, K = 4096;
    float *A = dev_alloc<float>((size_t)M * K), *Bt = dev_alloc<float>((size_t)N * K);
    __nv_bfloat16 *A16 = dev_alloc<__nv_bfloat16>((size_t)M * K),
                  *Bt16 = dev_alloc<__nv_bfloat16>((size_t)N * K);
    fill_quantized<<<4096, 256>>>(A, A16, (size_t)M * K, 6);
    fill_quantized<<<4096, 256>>>(Bt, Bt16, (size_t)N * K, 7);
    float* C = dev_alloc<float>((size_t)M * N);
    CHECK(
        cudaFuncSetAttribute(gemm_bf16_mma, cudaFuncAttributeMaxDynamicSharedMemorySize, MM_SMEM));
    // Every product and partial sum of these inputs is exact in FP32 (multiples of 2^-12 under
    // 2^12): the results are held to the f64 dot products within 1e-3 (4 units of that grid,
    // room for a tensor core's accumulation order).
    auto check = [&] {
        std::vector<float> c = back(C, (size_t)M * N);
        for (size_t s : sample((size_t)M * N, 256)) {
            size_t i = s / N, j = s % N;
            double want = 0;
            for (int k = 0; k < K; ++k)
                want += (double)quantized(6, i * K + k) * quantized(7, j * K + k);
            if (!near(c[s], want, 1e-3, 1)) return mismatch("C element", s, c[s], want);
        }
        return std::string("ok");
    };
    r.run(
        "sgemm_smem_4x2", (2.0 * M * K + (double)M * N) * 4,
        [&] { sgemm_smem_4x2<<<dim3(N / SG_BN, M / SG_BM), 256>>>(A, Bt, C, M, N, K); },
        poison(C, (size_t)M * N * 4), check);
    r.run(
        "gemm_bf16_mma", 2.0 * M * K * 2 + (double)M * N * 4,
        [&] { gemm_bf16_mma<<<dim3(N / MM_BN, M / MM_BM), 256, MM_SMEM>>>(A16, Bt16, C, M, N, K); },
        poison(C, (size_t)M * N * 4), check);
    CHECK(cudaFree(A));
    CHECK(cudaFree(Bt));
    CHECK(cudaFree(A16));
    CHECK(cudaFree(Bt16));
    CHECK(cudaFree(C));
}

static void atomics(Runner& r) {
    if (r.any({"red_f32_per_thread", "red_f32_per_block", "cas_f64_per_block",
               "red_f64_per_block"})) {
        const size_t n = size_t(1) << 27;  // 512 MiB
        const int blocks = 2048;
        const size_t per_thread = n / ((size_t)blocks * 256);
        float* in = dev_alloc<float>(n);
        fill_eighths<<<4096, 256>>>(in, n, 8);
        double want = 0;
        for (size_t i = 0; i < n; ++i) want += eighths(8, i);
        // Every partial sum of eighths is exact: the results must equal the f64 sum.
        float* acc32 = dev_alloc<float>(1);
        double* acc64 = dev_alloc<double>(1);
        auto check32 = [&] {
            float got = back(acc32, 1)[0];
            return got == want ? std::string("ok") : mismatch("sum", 0, got, want);
        };
        auto check64 = [&] {
            double got = back(acc64, 1)[0];
            return got == want ? std::string("ok") : mismatch("sum", 0, got, want);
        };
        r.run(
            "red_f32_per_thread", n * 4.0,
            [&] { red_f32_per_thread<<<blocks, 256>>>(in, acc32, per_thread); }, zero(acc32, 4),
            check32);
        r.run(
            "red_f32_per_block", n * 4.0,
            [&] { red_f32_per_block<<<blocks, 256>>>(in, acc32, per_thread); }, zero(acc32, 4),
            check32);
        r.run(
            "cas_f64_per_block", n * 4.0,
            [&] { cas_f64_per_block<<<blocks, 256>>>(in, acc64, per_thread); }, zero(acc64, 8),
            check64);
        r.run(
            "red_f64_per_block", n * 4.0,
            [&] { red_f64_per_block<<<blocks, 256>>>(in, acc64, per_thread); }, zero(acc64, 8),
            check64);
        CHECK(cudaFree(in));
        CHECK(cudaFree(acc32));
        CHECK(cudaFree(acc64));
    }
    if (r.any({"compact_ticket_per_element", "compact_ticket_per_block"})) {
        const size_t n = size_t(1) << 26;  // 256 MiB in, about half of it out
        float* in = dev_uniform(n, 9, 0, 1);
        float* out = dev_alloc<float>(n);
        unsigned* count = dev_alloc<unsigned>(1);
        // The kept set, independent of order: its size, its sum, and a sum of hashes of its bits.
        size_t want_count = 0;
        double want_sum = 0;
        uint64_t want_hash = 0;
        for (size_t i = 0; i < n; ++i) {
            float v = uniform(9, i, 0, 1);
            if (v > 0.5f) {
                uint32_t bits;
                std::memcpy(&bits, &v, 4);
                ++want_count;
                want_sum += v;
                want_hash += splitmix64(bits);
            }
        }
        auto reset = [&] {
            CHECK(cudaMemsetAsync(count, 0, 4));
            CHECK(cudaMemsetAsync(out, 0xff, n * 4));
        };
        auto check = [&] {
            unsigned got = back(count, 1)[0];
            if (got != want_count) return mismatch("count", 0, got, (double)want_count);
            std::vector<float> o = back(out, got);
            double sum = 0;
            uint64_t hash = 0;
            for (float v : o) {
                uint32_t bits;
                std::memcpy(&bits, &v, 4);
                sum += v;
                hash += splitmix64(bits);
            }
            if (hash != want_hash)
                return mismatch("kept-set hash", 0, (double)hash, (double)want_hash);
            return near(sum, want_sum, 1e-9, want_sum) ? std::string("ok")
                                                       : mismatch("kept sum", 0, sum, want_sum);
        };
        double bytes = n * 4.0 + want_count * 4.0;
        int blocks = (int)(n / COMPACT_TILE);
        r.run(
            "compact_ticket_per_element", bytes,
            [&] { compact_ticket_per_element<<<blocks, 256>>>(in, out, count); }, reset, check);
        r.run(
            "compact_ticket_per_block", bytes,
            [&] { compact_ticket_per_block<<<blocks, 256>>>(in, out, count); }, reset, check);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
        CHECK(cudaFree(count));
    }
    if (r.any({"sumsq_shared_atomic_per_thread", "sumsq_shared_atomic_per_warp"})) {
        const size_t n = size_t(1) << 27;  // 512 MiB
        float* in = dev_uniform(n, 10, -1, 1);
        double want = uniform_sum(10, n, -1, 1, true);
        float* acc = dev_alloc<float>(1);
        auto check = [&] {
            float got = back(acc, 1)[0];
            return near(got, want, 1e-4, want) ? std::string("ok")
                                               : mismatch("sum of squares", 0, got, want);
        };
        int blocks = (int)(n / SUMSQ_TILE);
        r.run(
            "sumsq_shared_atomic_per_thread", n * 4.0,
            [&] { sumsq_shared_atomic_per_thread<<<blocks, SUMSQ_THREADS>>>(in, acc); },
            zero(acc, 4), check);
        r.run(
            "sumsq_shared_atomic_per_warp", n * 4.0,
            [&] { sumsq_shared_atomic_per_warp<<<blocks, SUMSQ_THREADS>>>(in, acc); }, zero(acc, 4),
            check);
        CHECK(cudaFree(in));
        CHECK(cudaFree(acc));
    }
}

static void grid_and_warps(Runner& r) {
    if (r.any({"matrix_chain_few_warps", "matrix_chain_many_warps", "matrix_chain_16_per_sm"})) {
        const int items = 131072, steps = 800;
        float* in = dev_uniform((size_t)CHAIN_ROWS * items, 11, -0.125f, 0.125f);
        float* out = dev_alloc<float>(items);
        auto check = [&] {
            std::vector<float> o = back(out, items);
            for (size_t item : sample(items, 64)) {
                auto at = [&](int row) {
                    return uniform(11, (size_t)row * items + item, -0.125f, 0.125f);
                };
                float v[8];
                for (int k = 0; k < 8; ++k) v[k] = at(64 + k);
                for (int s = 0; s < steps; ++s) {
                    float nv[8];
                    for (int i = 0; i < 8; ++i) {
                        float a = 0.01f;
                        for (int c = 0; c < 8; ++c) a = std::fmaf(at(i * 8 + c), v[c], a);
                        nv[i] = a;
                    }
                    std::memcpy(v, nv, sizeof v);
                }
                float want = 0;
                for (int k = 0; k < CHAIN_TAB; ++k) want = std::fmaf(at(72 + k), v[k % 8], want);
                if (o[item] != want) return mismatch("item", item, o[item], want);
            }
            return std::string("ok");
        };
        double bytes = ((double)CHAIN_ROWS + 1) * items * 4;
        r.run(
            "matrix_chain_few_warps", bytes,
            [&] { matrix_chain_few_warps<<<128, 32>>>(in, out, items, steps); },
            poison(out, items * 4), check);
        r.run(
            "matrix_chain_many_warps", bytes,
            [&] { matrix_chain_many_warps<<<items / 32, 32>>>(in, out, items, steps); },
            poison(out, items * 4), check);
        r.run(
            "matrix_chain_16_per_sm", bytes,
            [&] { matrix_chain_16_per_sm<<<items / 32, 32>>>(in, out, items, steps); },
            poison(out, items * 4), check);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
    }
    if (r.any({"diverge_sin_fma_by_lane", "diverge_sin_fma_by_warp"})) {
        const size_t n = size_t(1) << 20;
        const int k = 1024;
        float* in = dev_uniform(n, 12, -0.5f, 0.5f);
        float* out = dev_alloc<float>(n);
        // Both kernels compute every element on the same path: the outputs must agree. The sine
        // path is held to f64 sines within 5e-2 (__sinf's error and the FP32 rounding of a sum
        // that reaches ~700, over 1024 terms).
        auto check = [&] {
            std::vector<float> o = back(out, n);
            for (size_t e : sample(n, 512)) {
                float x = uniform(12, e, -0.5f, 0.5f);
                if (e & 1) {
                    double s = 0, a1 = 0, a2 = 0, a3 = 0;
                    float y = x;
                    for (int i = 0; i < k; ++i) {
                        double u = std::sin((double)y);
                        y += 1e-3f;
                        s += u;
                        a1 = a1 * 0.9f + u;
                        a2 = a2 * 0.5 + a1;
                        a3 = a3 * 0.5 + a2;
                    }
                    s += a3;
                    if (!near(o[e], s, 5e-2, 1)) return mismatch("sine path element", e, o[e], s);
                } else {
                    float a = x;
                    for (int i = 0; i < k; ++i) a = std::fmaf(a, 0.999f, 1e-3f);
                    if (o[e] != a) return mismatch("fma path element", e, o[e], a);
                }
            }
            return std::string("ok");
        };
        r.run(
            "diverge_sin_fma_by_lane", n * 8.0,
            [&] { diverge_sin_fma_by_lane<<<n / 256, 256>>>(in, out, k); }, poison(out, n * 4),
            check);
        r.run(
            "diverge_sin_fma_by_warp", n * 8.0,
            [&] { diverge_sin_fma_by_warp<<<n / 256, 256>>>(in, out, k); }, poison(out, n * 4),
            check);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
    }
    if (r.any({"fma_units_1p1_waves", "fma_units_8p8_waves"})) {
        const int steps = 1024, few = r.sms + r.sms / 10, units = 8 * few;  // 1.1 waves of 8 units
        const size_t n = (size_t)units * 1024;
        const int reserve = 120 * 1024;  // more than half an SM's shared memory: one block per SM
        CHECK(cudaFuncSetAttribute(fma_units_1p1_waves, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   reserve));
        CHECK(cudaFuncSetAttribute(fma_units_8p8_waves, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   reserve));
        float* coef = dev_uniform(n, 13, 0.9f, 0.99f);
        float* out = dev_alloc<float>(n);
        auto check = [&] {
            std::vector<float> o = back(out, n);
            for (size_t i : sample(n, 256)) {
                float m = uniform(13, i, 0.9f, 0.99f), a0 = 0.1f, a1 = 0.2f, a2 = 0.3f, a3 = 0.4f;
                for (int s = 0; s < steps; ++s) {
                    a0 = std::fmaf(a0, m, 1e-3f);
                    a1 = std::fmaf(a1, m, 2e-3f);
                    a2 = std::fmaf(a2, m, 3e-3f);
                    a3 = std::fmaf(a3, m, 4e-3f);
                }
                float want = (a0 + a1) + (a2 + a3);
                if (o[i] != want) return mismatch("unit element", i, o[i], want);
            }
            return std::string("ok");
        };
        r.run(
            "fma_units_1p1_waves", n * 8.0,
            [&] { fma_units_1p1_waves<<<few, 1024, reserve>>>(coef, out, 8, steps); },
            poison(out, n * 4), check);
        r.run(
            "fma_units_8p8_waves", n * 8.0,
            [&] { fma_units_8p8_waves<<<units, 1024, reserve>>>(coef, out, 1, steps); },
            poison(out, n * 4), check);
        CHECK(cudaFree(coef));
        CHECK(cudaFree(out));
    }
    if (r.any({"rowsum_block_per_row", "rowsum_blocks_per_chunk"})) {
        const int rows = 8, splits = 128;
        const size_t cols = size_t(1) << 24, n = rows * cols;  // 512 MiB
        float* in = dev_uniform(n, 14, 0, 1);
        float* out = dev_alloc<float>(rows);
        std::vector<double> want(rows, 0.0);
        for (size_t i = 0; i < n; ++i) want[i / cols] += uniform(14, i, 0, 1);
        auto check = [&] {
            std::vector<float> o = back(out, rows);
            for (int row = 0; row < rows; ++row)
                if (!near(o[row], want[row], 1e-5, want[row]))
                    return mismatch("row", row, o[row], want[row]);
            return std::string("ok");
        };
        const float4* in4 = reinterpret_cast<const float4*>(in);
        r.run(
            "rowsum_block_per_row", n * 4.0,
            [&] { rowsum_block_per_row<<<rows, 1024>>>(in4, out, cols / 4, 1); },
            zero(out, rows * 4), check);
        r.run(
            "rowsum_blocks_per_chunk", n * 4.0,
            [&] { rowsum_blocks_per_chunk<<<rows * splits, 1024>>>(in4, out, cols / 4, splits); },
            zero(out, rows * 4), check);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
    }
}

static void shared_and_local(Runner& r) {
    if (r.any({"matvec32_pitch32", "matvec32_pitch33"})) {
        const int mats = 1 << 17;  // 512 MiB of matrices
        float* A = dev_uniform((size_t)mats * 1024, 15, -1, 1);
        float* x = dev_uniform((size_t)mats * 32, 16, -1, 1);
        float* y = dev_alloc<float>((size_t)mats * 32);
        auto check = [&] {
            std::vector<float> o = back(y, (size_t)mats * 32);
            for (size_t s : sample((size_t)mats * 32, 2048)) {
                size_t m = s / 32, i = s % 32;
                float want = 0;
                for (int j = 0; j < 32; ++j)
                    want = std::fmaf(uniform(15, m * 1024 + i * 32 + j, -1, 1),
                                     uniform(16, m * 32 + j, -1, 1), want);
                if (o[s] != want) return mismatch("y element", s, o[s], want);
            }
            return std::string("ok");
        };
        double bytes = (double)mats * (1024 + 64) * 4;
        const float4* A4 = reinterpret_cast<const float4*>(A);
        r.run(
            "matvec32_pitch32", bytes,
            [&] { matvec32_pitch32<<<mats / 8, 256>>>(A4, x, y, mats, 0); },
            poison(y, (size_t)mats * 128), check);
        r.run(
            "matvec32_pitch33", bytes,
            [&] { matvec32_pitch33<<<mats / 8, 256>>>(A4, x, y, mats, 0); },
            poison(y, (size_t)mats * 128), check);
        CHECK(cudaFree(A));
        CHECK(cudaFree(x));
        CHECK(cudaFree(y));
    }
    if (r.any({"fir32_ring_runtime_phase", "fir32_ring_static_phase"})) {
        const int channels = 1 << 20, steps = 64;
        const size_t n = (size_t)channels * steps;  // 256 MiB in, 256 MiB out
        float* x = dev_uniform(n, 17, -1, 1);
        float* w = dev_uniform(FIR_TAPS, 18, -0.5f, 0.5f);
        float* y = dev_alloc<float>(n);
        auto check = [&] {
            std::vector<float> o = back(y, n);
            for (size_t c : sample(channels, 64))
                for (int k = 0; k < steps; ++k) {
                    float acc = 0;
                    for (int j = 0; j < FIR_TAPS; ++j) {
                        float xv =
                            k - j >= 0 ? uniform(17, (size_t)(k - j) * channels + c, -1, 1) : 0.0f;
                        acc = std::fmaf(uniform(18, j, -0.5f, 0.5f), xv, acc);
                    }
                    size_t at = (size_t)k * channels + c;
                    if (o[at] != acc) return mismatch("sample", at, o[at], acc);
                }
            return std::string("ok");
        };
        r.run(
            "fir32_ring_runtime_phase", n * 8.0,
            [&] { fir32_ring_runtime_phase<<<channels / 256, 256>>>(x, w, y, channels, steps, 0); },
            poison(y, n * 4), check);
        r.run(
            "fir32_ring_static_phase", n * 8.0,
            [&] { fir32_ring_static_phase<<<channels / 256, 256>>>(x, w, y, channels, steps, 0); },
            poison(y, n * 4), check);
        CHECK(cudaFree(x));
        CHECK(cudaFree(w));
        CHECK(cudaFree(y));
    }
}

// A random cyclic permutation of [0, n) (Sattolo's algorithm): next[j] is j's successor.
static std::vector<int> random_cycle(int n, uint64_t seed) {
    std::vector<int> next(n);
    std::iota(next.begin(), next.end(), 0);
    for (int i = n - 1; i > 0; --i) {
        int j = (int)(splitmix64(seed * 0x9e37 + i) % (uint64_t)i);
        std::swap(next[i], next[j]);
    }
    return next;
}

static void latency_and_pipes(Runner& r) {
    if (r.any({"chase_horner_hog", "chase_horner_lean"})) {
        const int nodes = 1 << 21, warps = nodes / CHASE_HOPS;  // 256 MiB of payload
        const float z = 0.9f;
        float* payload = dev_uniform((size_t)nodes * 32, 19, -1, 1);
        std::vector<int> next = random_cycle(nodes, 20), start(warps);
        for (int w = 0, j = 0, pos = 0; pos < nodes; ++pos, j = next[j])
            if (pos % CHASE_HOPS == 0) start[w++] = j;
        int *d_next = dev_alloc<int>(nodes), *d_start = dev_alloc<int>(warps);
        CHECK(cudaMemcpy(d_next, next.data(), nodes * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_start, start.data(), warps * 4, cudaMemcpyHostToDevice));
        float* out = dev_alloc<float>((size_t)warps * 32);
        auto check = [&] {
            std::vector<float> o = back(out, (size_t)warps * 32);
            for (size_t s : sample((size_t)warps * 32, 1024)) {
                size_t w = s / 32, lane = s % 32;
                double want = 0, scale = 0, p = 1;
                for (int h = 0, j = start[w]; h < CHASE_HOPS; ++h, j = next[j], p *= z) {
                    double v = uniform(19, (size_t)j * 32 + lane, -1, 1);
                    want += v * p;
                    scale += std::fabs(v) * p;
                }
                if (!near(o[s], want, 1e-5, scale)) return mismatch("warp lane", s, o[s], want);
            }
            return std::string("ok");
        };
        double bytes = (double)nodes * (128 + 4) + warps * 132.0;
        int blocks = warps * 32 / 256;
        r.run(
            "chase_horner_hog", bytes,
            [&] { chase_horner_hog<<<blocks, 256>>>(payload, d_next, d_start, out, z); },
            poison(out, (size_t)warps * 128), check);
        r.run(
            "chase_horner_lean", bytes,
            [&] { chase_horner_lean<<<blocks, 256>>>(payload, d_next, d_start, out, z); },
            poison(out, (size_t)warps * 128), check);
        CHECK(cudaFree(payload));
        CHECK(cudaFree(d_next));
        CHECK(cudaFree(d_start));
        CHECK(cudaFree(out));
    }
    if (r.any({"softmax_row_cp_async_1stage", "softmax_row_cp_async_8stage"})) {
        const int rows = 10 * r.sms;  // ten whole waves of one block per SM; ~253 MB
        const size_t n = (size_t)rows * SMX_COLS;
        CHECK(cudaFuncSetAttribute(softmax_row_cp_async_1stage,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, SMX_SMEM));
        CHECK(cudaFuncSetAttribute(softmax_row_cp_async_8stage,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, SMX_SMEM));
        float* x = dev_uniform(n, 21, -2, 2);
        float* y = dev_alloc<float>(n);
        auto check = [&] {
            for (int row : {0, 1, rows / 2, rows - 1}) {
                std::vector<float> o = back(y, SMX_COLS, (size_t)row * SMX_COLS);
                double m = -1e30, l = 0;
                for (int c = 0; c < SMX_COLS; ++c)
                    m = std::max(m, (double)uniform(21, (size_t)row * SMX_COLS + c, -2, 2));
                for (int c = 0; c < SMX_COLS; ++c)
                    l += std::exp(uniform(21, (size_t)row * SMX_COLS + c, -2, 2) - m);
                for (int c = 0; c < SMX_COLS; ++c) {
                    double want = std::exp(uniform(21, (size_t)row * SMX_COLS + c, -2, 2) - m) / l;
                    if (!near(o[c], want, 1e-5, want))
                        return mismatch("row element", (size_t)row * SMX_COLS + c, o[c], want);
                }
            }
            return std::string("ok");
        };
        r.run(
            "softmax_row_cp_async_1stage", n * 8.0,
            [&] { softmax_row_cp_async_1stage<<<rows, SMX_THREADS, SMX_SMEM>>>(x, y); },
            poison(y, n * 4), check);
        r.run(
            "softmax_row_cp_async_8stage", n * 8.0,
            [&] { softmax_row_cp_async_8stage<<<rows, SMX_THREADS, SMX_SMEM>>>(x, y); },
            poison(y, n * 4), check);
        CHECK(cudaFree(x));
        CHECK(cudaFree(y));
    }
    if (r.any({"rbf24_expf_per_centre", "rbf24_two_expf_horner"})) {
        const size_t n = size_t(1) << 26;  // 256 MiB in, 256 MiB out
        float a[RBF_K], b[RBF_K];
        for (int k = 0; k < RBF_K; ++k) {
            a[k] = uniform(22, k, 0.5f, 1.5f);
            b[k] = (float)(a[k] * std::exp(-(double)RBF_D * RBF_D * k * k));
        }
        CHECK(cudaMemcpyToSymbol(rbf_a, a, sizeof a));
        CHECK(cudaMemcpyToSymbol(rbf_b, b, sizeof b));
        float* x = dev_uniform(n, 23, -0.5f, 0.5f);
        float* y = dev_alloc<float>(n);
        auto check = [&] {
            std::vector<float> o = back(y, n);
            for (size_t i : sample(n, 4096)) {
                double v = uniform(23, i, -0.5f, 0.5f), want = 0;
                for (int k = 0; k < RBF_K; ++k) {
                    double d = v - (RBF_C0 + k * (double)RBF_D);
                    want += a[k] * std::exp(-d * d);
                }
                if (!near(o[i], want, 1e-4, want)) return mismatch("element", i, o[i], want);
            }
            return std::string("ok");
        };
        r.run(
            "rbf24_expf_per_centre", n * 8.0,
            [&] { rbf24_expf_per_centre<<<n / 256, 256>>>(x, y, n); }, poison(y, n * 4), check);
        r.run(
            "rbf24_two_expf_horner", n * 8.0,
            [&] { rbf24_two_expf_horner<<<n / 256, 256>>>(x, y, n); }, poison(y, n * 4), check);
        CHECK(cudaFree(x));
        CHECK(cudaFree(y));
    }
}

static void working_sets(Runner& r) {
    if (r.any({"gemv_w24mib_l2_resident", "gemv_w240mib_from_dram"})) {
        const int cols = 2048, small_rows = 3072, small_q = 40, big_rows = 30720, big_q = 4;
        float* W = dev_uniform((size_t)big_rows * cols, 24, -1, 1);
        float* x = dev_uniform((size_t)small_q * cols, 25, -1, 1);
        float* y = dev_alloc<float>((size_t)small_rows * small_q);
        auto check = [&](int rows) {
            return [&, rows] {
                size_t tasks = (size_t)small_rows * small_q;
                std::vector<float> o = back(y, tasks);
                for (size_t t : sample(tasks, 256)) {
                    size_t q = t / rows, row = t % rows;
                    double want = 0, scale = 0;
                    for (int c = 0; c < cols; ++c) {
                        double p = (double)uniform(24, row * cols + c, -1, 1) *
                                   uniform(25, q * cols + c, -1, 1);
                        want += p;
                        scale += std::fabs(p);
                    }
                    if (!near(o[t], want, 1e-5, scale)) return mismatch("task", t, o[t], want);
                }
                return std::string("ok");
            };
        };
        const float4 *W4 = reinterpret_cast<const float4*>(W),
                     *x4 = reinterpret_cast<const float4*>(x);
        size_t tasks = (size_t)small_rows * small_q;
        // A grid-stride loop: one wave of the blocks that fit at once, so the pair holds no
        // tail (1.33 waves ran 1.24x slower than one at 24 MiB, 1.09x at 240 MiB:
        // gemv_waves.cu beside this file).
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gemv_w24mib_l2_resident, 256, 0));
        int blocks = r.sms * per_sm;
        r.run(
            "gemv_w24mib_l2_resident",
            ((double)small_rows * cols + (double)small_q * cols + tasks) * 4,
            [&] {
                gemv_w24mib_l2_resident<<<blocks, 256>>>(W4, x4, y, small_rows, cols / 4, small_q);
            },
            poison(y, tasks * 4), check(small_rows));
        r.run(
            "gemv_w240mib_from_dram", ((double)big_rows * cols + (double)big_q * cols + tasks) * 4,
            [&] { gemv_w240mib_from_dram<<<blocks, 256>>>(W4, x4, y, big_rows, cols / 4, big_q); },
            poison(y, tasks * 4), check(big_rows));
        CHECK(cudaFree(W));
        CHECK(cudaFree(x));
        CHECK(cudaFree(y));
    }
    if (r.any({"rmsnorm_rows"})) {
        const int rows = 16384;
        const size_t n = (size_t)rows * RMS_COLS;  // 256 MiB in, 256 MiB out
        float* x = dev_uniform(n, 26, -1, 1);
        float* gamma = dev_uniform(RMS_COLS, 27, 0.5f, 1.5f);
        float* y = dev_alloc<float>(n);
        r.run(
            "rmsnorm_rows", n * 8.0,
            [&] {
                rmsnorm_rows<<<rows, 256>>>(reinterpret_cast<const float4*>(x),
                                            reinterpret_cast<const float4*>(gamma),
                                            reinterpret_cast<float4*>(y));
            },
            poison(y, n * 4),
            [&] {
                for (int row : {0, 7, rows / 3, rows - 1}) {
                    std::vector<float> o = back(y, RMS_COLS, (size_t)row * RMS_COLS);
                    double ss = 0;
                    for (int c = 0; c < RMS_COLS; ++c) {
                        double v = uniform(26, (size_t)row * RMS_COLS + c, -1, 1);
                        ss += v * v;
                    }
                    double inv = 1 / std::sqrt(ss / RMS_COLS + 1e-6);
                    for (int c = 0; c < RMS_COLS; ++c) {
                        double want = uniform(26, (size_t)row * RMS_COLS + c, -1, 1) * inv *
                                      uniform(27, c, 0.5f, 1.5f);
                        if (!near(o[c], want, 1e-5, std::fabs(want) + 1e-3))
                            return mismatch("row element", c, o[c], want);
                    }
                }
                return std::string("ok");
            });
        CHECK(cudaFree(x));
        CHECK(cudaFree(gamma));
        CHECK(cudaFree(y));
    }
}

int main(int argc, char** argv) {
    Runner r;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--profile") {
            r.profile = true;
        } else if (a == "--only" && i + 1 < argc) {
            std::string list = argv[++i];
            for (size_t at = 0; at <= list.size();) {
                size_t end = list.find(',', at);
                if (end == std::string::npos) end = list.size();
                if (end > at) r.only.push_back(list.substr(at, end - at));
                at = end + 1;
            }
        } else if (!a.empty() && a.find_first_not_of("0123456789") == std::string::npos &&
                   std::atoi(a.c_str()) > 0) {
            r.reps = std::atoi(a.c_str());
        } else {
            std::fprintf(
                stderr,
                "usage: cuda_corpus [reps=20] [--profile] [--only NAME[,NAME...]] (got '%s')\n",
                a.c_str());
            return 2;
        }
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    r.sms = prop.multiProcessorCount;
    std::fprintf(stderr, "# %s, %d SMs, L2 %d MiB, %s\n", prop.name, r.sms, prop.l2CacheSize >> 20,
                 r.profile ? "one profiled launch per kernel" : "timed");
    std::printf("kernel,reps,median_us,min_us,max_us,min_bytes,check\n");
    ceilings(r);
    waste(r);
    gemms(r);
    atomics(r);
    grid_and_warps(r);
    shared_and_local(r);
    latency_and_pipes(r);
    working_sets(r);
    if (r.failed) std::fprintf(stderr, "cuda_corpus: a check failed (see the check column)\n");
    return r.failed ? 1 : 0;
}
