// A plain CUDA C++ harness that times the nvcc twins (gpu-kernels/cuda/kernels.cu, included
// verbatim) with nothing of the lab in between: cudaMalloc, <<<grid, 256>>>, one CUDA-event
// pair around each launch (the output reset queued before the start event), median of the
// repetitions. It is the independent check on `lab bench`: the same kernel on the same GPU
// must get the same number from both, and where they differ the cause is found before either
// is trusted.
//
//   harness reduce    [log2n=28] [reps=20]            v1..v6 f32, result word at a fresh cudaMalloc
//   harness placement [log2n=28] [slots=64] [reps=10] v1..v4 f32 with the result word at `slots`
//                                                     addresses 1 MiB + 128 B apart
//   harness launchgap [launches=1000] [reps=20]       bump back to back: legacy and non-blocking stream
//
// Built by `cargo xtask dist` into dist/harness (nvcc -O3 -arch=sm_90, static cudart).
// Output: one CSV line per measurement on stdout (header first), so runs diff and parse.

#include "../gpu-kernels/cuda/kernels.cu"
#include "measure.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using Kernel = void (*)(const float*, std::uint64_t, float*);

struct Version {
    const char* name;
    Kernel kernel;
    std::uint64_t per_block;  // elements per block; 0: one wave (v6)
};

static const Version VERSIONS[] = {
    {"reduce_v1", reduce_v1_f32, BLOCK},           {"reduce_v2", reduce_v2_f32, BLOCK},
    {"reduce_v3", reduce_v3_f32, BLOCK},           {"reduce_v4", reduce_v4_f32, BLOCK * COARSEN},
    {"reduce_v5", reduce_v5_f32, BLOCK * COARSEN}, {"reduce_v6", reduce_v6_f32, 0},
};

struct Launch {
    unsigned grid;
    unsigned shared;
};

static Launch config(const Version& v, std::uint64_t n) {
    if (v.per_block) {
        return {static_cast<unsigned>((n + v.per_block - 1) / v.per_block),
                static_cast<unsigned>(BLOCK * sizeof(float))};
    }
    int per_sm = 0, sms = 0;
    unsigned smem = WARPS * sizeof(float);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, BLOCK, smem));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::uint64_t needed = (n + BLOCK * 4 - 1) / (BLOCK * 4);
    return {static_cast<unsigned>(std::min<std::uint64_t>(needed, std::uint64_t(per_sm) * sms)),
            smem};
}

// Event-timed launches of `v` adding into `out` (zeroed before each, outside the events).
static std::vector<double> time_reduce(const Version& v, const float* in, std::uint64_t n,
                                       float* out, int reps) {
    Launch c = config(v, n);
    return time_launches([&] { v.kernel<<<c.grid, BLOCK, c.shared>>>(in, n, out); }, out,
                         sizeof(float), 0, reps);
}

// Random floats in [0, 1) on the GPU, and their f64 sum.
static float* random_input(std::uint64_t n, double* sum) {
    std::vector<float> h(n);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    double s = 0;
    for (auto& x : h) s += (x = u(rng));
    float* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    *sum = s;
    return d;
}

static int arg(int argc, char** argv, int i, int fallback) {
    return argc > i ? std::atoi(argv[i]) : fallback;
}

static void reduce(int argc, char** argv) {
    std::uint64_t n = std::uint64_t(1) << arg(argc, argv, 2, 28);
    int reps = arg(argc, argv, 3, 20);
    double want = 0;
    float* in = random_input(n, &want);
    float* out = nullptr;
    CHECK(cudaMalloc(&out, sizeof(float)));
    std::printf("kernel,n,median_us,min_us,max_us,gbps,rel_err\n");
    for (const Version& v : VERSIONS) {
        std::vector<double> us = time_reduce(v, in, n, out, reps);
        float got = 0;
        CHECK(cudaMemcpy(&got, out, sizeof(float), cudaMemcpyDeviceToHost));
        double med = median(us);
        std::printf("%s,%llu,%.2f,%.2f,%.2f,%.1f,%.2e\n", v.name, (unsigned long long)n, med,
                    *std::min_element(us.begin(), us.end()),
                    *std::max_element(us.begin(), us.end()), n * 4.0 / med / 1e3,
                    std::abs(got - want) / want);
    }
}

static void placement(int argc, char** argv) {
    std::uint64_t n = std::uint64_t(1) << arg(argc, argv, 2, 28);
    int slots = arg(argc, argv, 3, 64);
    int reps = arg(argc, argv, 4, 10);
    const std::size_t stride = (1u << 20) + 128;
    double want = 0;
    float* in = random_input(n, &want);
    char* pool = nullptr;
    CHECK(cudaMalloc(&pool, stride * slots));
    std::printf("kernel,n,slot,offset_bytes,median_us\n");
    for (int k = 0; k < 4; ++k) {
        for (int s = 0; s < slots; ++s) {
            float* out = reinterpret_cast<float*>(pool + s * stride);
            double med = median(time_reduce(VERSIONS[k], in, n, out, reps));
            std::printf("%s,%llu,%d,%zu,%.2f\n", VERSIONS[k].name, (unsigned long long)n, s,
                        s * stride, med);
        }
    }
}

static void launchgap(int argc, char** argv) {
    int launches = arg(argc, argv, 2, 1000);
    int reps = arg(argc, argv, 3, 20);
    const unsigned n = 4096;
    float* data = nullptr;
    CHECK(cudaMalloc(&data, n * sizeof(float)));
    cudaStream_t nonblocking;
    CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    std::printf("mode,stream,launches,median_us_per_kernel,min_us_per_kernel\n");
    for (int which = 0; which < 2; ++which) {
        cudaStream_t st = which ? nonblocking : cudaStream_t(0);
        cudaEvent_t a, b;
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
        std::vector<double> per;
        for (int r = -3; r < reps; ++r) {
            CHECK(cudaMemsetAsync(data, 0, n * sizeof(float), st));
            CHECK(cudaEventRecord(a, st));
            for (int k = 0; k < launches; ++k) bump<<<(n + 255) / 256, 256, 0, st>>>(data, n);
            CHECK(cudaEventRecord(b, st));
            CHECK(cudaEventSynchronize(b));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 0) per.push_back(ms * 1e3 / launches);
        }
        std::printf("back_to_back,%s,%d,%.3f,%.3f\n", which ? "non-blocking" : "legacy",
                    launches, median(per), *std::min_element(per.begin(), per.end()));
    }
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (!std::strcmp(mode, "reduce")) {
        reduce(argc, argv);
    } else if (!std::strcmp(mode, "placement")) {
        placement(argc, argv);
    } else if (!std::strcmp(mode, "launchgap")) {
        launchgap(argc, argv);
    } else {
        std::fprintf(stderr,
                     "usage: harness reduce [log2n] [reps] | placement [log2n] [slots] [reps] | "
                     "launchgap [launches] [reps]\n");
        return 2;
    }
    return 0;
}
