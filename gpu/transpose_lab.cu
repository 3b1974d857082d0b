// Does the order in which a transpose's tiles are launched change its DRAM rate? (E13 in
// docs/experiments.md.) The padded 32×32 tile transpose of the chapter, launched two ways over
// an n×n f32 matrix, against the driver's D2D copy of the same bytes in the same process:
//
//   rows   blockIdx.x walks the input's tile columns: the resident blocks read a narrow band of
//          input rows and write a narrow band of output *columns* (each output row touched in
//          a short segment: writes spread over the whole output)
//   cols   blockIdx.x walks the input's tile rows: the resident blocks write a narrow band of
//          output rows and read a spread of input rows
//
//   transpose_lab [edge=8192] [reps=20]   CSV: variant, median/min/max µs, ratio to D2D

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "measure.cuh"

constexpr unsigned TILE = 32, ROWS = 8;

template <bool COLS_FIRST>
__global__ void padded(const float* in, float* out, unsigned n) {
    __shared__ float tile[TILE][TILE + 1];
    unsigned bx = COLS_FIRST ? blockIdx.y : blockIdx.x;  // input tile column
    unsigned by = COLS_FIRST ? blockIdx.x : blockIdx.y;  // input tile row
    unsigned x = bx * TILE + threadIdx.x, y = by * TILE + threadIdx.y;
    for (unsigned j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[std::uint64_t(y + j) * n + x];
    __syncthreads();
    x = by * TILE + threadIdx.x;
    y = bx * TILE + threadIdx.y;
    for (unsigned j = 0; j < TILE; j += ROWS)
        out[std::uint64_t(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char** argv) {
    unsigned n = argc > 1 ? unsigned(std::atoi(argv[1])) : 8192;  // a multiple of 32
    int reps = argc > 2 ? std::atoi(argv[2]) : 20;
    std::size_t elems = std::size_t(n) * n, bytes = elems * 4;
    std::vector<float> h(elems);
    for (std::size_t i = 0; i < elems; ++i) h[i] = float((i * 2654435761u) % 1000003) * 1e-3f;
    float *in, *out;
    CHECK(cudaMalloc(&in, bytes));
    CHECK(cudaMalloc(&out, bytes));
    CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    dim3 block(TILE, ROWS), tiles(n / TILE, n / TILE);
    struct V {
        const char* name;
        std::vector<double> us;
        bool transposed;
    };
    std::vector<V> vs;
    vs.push_back({"d2d", time_launches([&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); }, out, bytes, 0xff, reps), false});
    vs.push_back({"rows", time_launches([&] { padded<false><<<tiles, block>>>(in, out, n); }, out, bytes, 0xff, reps), true});
    vs.push_back({"cols", time_launches([&] { padded<true><<<tiles, block>>>(in, out, n); }, out, bytes, 0xff, reps), true});
    // Check the last variant's output against the CPU transpose.
    std::vector<float> got(elems);
    CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
    std::size_t bad = 0;
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) bad += got[c * n + r] != h[r * n + c];
    if (bad) std::fprintf(stderr, "transpose_lab: cols: %zu elements wrong\n", bad);
    double ref = median(vs[0].us);
    std::printf("variant,edge,median_us,min_us,max_us,vs_d2d\n");
    for (auto& v : vs)
        std::printf("%s,%u,%.2f,%.2f,%.2f,%.4f\n", v.name, n, median(v.us),
                    *std::min_element(v.us.begin(), v.us.end()),
                    *std::max_element(v.us.begin(), v.us.end()), ref / median(v.us));
    return bad ? 1 : 0;
}
