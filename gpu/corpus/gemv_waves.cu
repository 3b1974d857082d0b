// Whether the corpus's gemv pair pays for a partial last wave: each is a grid-stride loop
// (every warp takes tasks/warps tasks), so a grid of exactly the blocks that fit at once does
// the same work in one wave. Times both at grids of 0.5 to 2 waves, among them 8 blocks an SM
// (1.33 waves where 34 registers a thread leave room for 6); CUDA events, median of 20 after
// 3 warm-ups, y poisoned before each run.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o gemv_waves gpu/corpus/gemv_waves.cu && ./gemv_waves
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_corpus_kernels.cuh"

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cudaError_t e = (x);                                                             \
        if (e != cudaSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

__global__ void fill(float* p, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = uniform(seed, i, -1, 1);
}

template <typename K>
static float median_us(K kernel, int blocks, const float4* W, const float4* x, float* y,
                       int rows, int cols4, int queries, size_t outs) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int rep = 0; rep < 23; ++rep) {
        CHECK(cudaMemset(y, 0xff, outs * sizeof(float)));
        CHECK(cudaEventRecord(a));
        kernel<<<blocks, 256>>>(W, x, y, rows, cols4, queries);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        if (rep >= 3) ms.push_back(t);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1000.0f;
}

int main() {
    int sms, per_sm;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gemv_w24mib_l2_resident, 256, 0));
    const int cols = 2048, small_rows = 3072, small_q = 40, big_rows = 30720, big_q = 4;
    float *W, *x, *y;
    CHECK(cudaMalloc(&W, (size_t)big_rows * cols * sizeof(float)));
    CHECK(cudaMalloc(&x, (size_t)small_q * cols * sizeof(float)));
    size_t outs = (size_t)small_rows * small_q;
    CHECK(cudaMalloc(&y, outs * sizeof(float)));
    fill<<<sms * 8, 256>>>(W, (size_t)big_rows * cols, 24);
    fill<<<sms * 8, 256>>>(x, (size_t)small_q * cols, 25);
    CHECK(cudaDeviceSynchronize());
    const float4 *W4 = (const float4*)W, *x4 = (const float4*)x;
    int wave = sms * per_sm;
    std::printf("%d SMs, %d blocks of 256 an SM at once: a wave is %d blocks\n", sms, per_sm, wave);
    std::printf("%-24s %7s %6s %10s\n", "kernel", "blocks", "waves", "median_us");
    int grids[] = {wave / 2, wave, sms * 8, wave + wave / 2, 2 * wave};
    for (int g : grids) {
        float t = median_us(gemv_w24mib_l2_resident, g, W4, x4, y, small_rows, cols / 4, small_q,
                            outs);
        std::printf("%-24s %7d %6.2f %10.1f\n", "gemv_w24mib_l2_resident", g, (double)g / wave, t);
    }
    for (int g : grids) {
        float t = median_us(gemv_w240mib_from_dram, g, W4, x4, y, big_rows, cols / 4, big_q, outs);
        std::printf("%-24s %7d %6.2f %10.1f\n", "gemv_w240mib_from_dram", g, (double)g / wave, t);
    }
    return 0;
}
