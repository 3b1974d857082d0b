// transpose_v4's mapping in CUDA C++ (a 64×64 XOR-swizzled tile, four 16-byte loads and
// stores per thread), varied one thing at a time against the driver's D2D copy and a flat
// copy kernel in the same process (E15 in docs/experiments.md):
//
//   raster / cols / cols2d   tiles launched along the input's tile rows, down its tile
//                            columns (1D grid), down the columns (2D grid, as the Rust kernel)
//   superRxC                 super-tiles of R×C tiles, down the columns inside and between them
//   -na                      loads as ld.global.nc.L1::no_allocate (the Rust load4_nc)
//   -plain                   plain loads (no __ldg); -cs: streaming stores (st.global.cs)
//
//   transpose_v4_lab [edge=8192] [reps=20]   CSV: variant, median/min/max µs, ratio to D2D
//   (every variant's output checked on every 7th row; two rounds, the second marked #2)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "measure.cuh"

constexpr unsigned T = 64;
__device__ __forceinline__ unsigned slot(unsigned r, unsigned c) { return r * T + (c ^ (r & 28)); }

// ORDER: 0 raster, 1 down the columns, 2 super-tiles SR×SC, 3 down the columns on a 2D grid.
template <int ORDER, int SR, int SC, bool CS, bool NA = false, bool PLAIN = false>
__global__ void __launch_bounds__(256) tv4(const float* in, float* __restrict__ out, unsigned n) {
    __shared__ __align__(16) float tile[T * T];
    unsigned tr = n / T;  // tiles per side
    unsigned b = blockIdx.x, trow, tcol;
    if (ORDER == 3) { trow = blockIdx.x; tcol = blockIdx.y; }
    else if (ORDER == 0) { trow = b / tr; tcol = b % tr; }
    else if (ORDER == 1) { trow = b % tr; tcol = b / tr; }
    else {
        unsigned per = SR * SC, g = b / per, i = b % per;
        unsigned gr = tr / SR;  // super-tiles per column
        unsigned grow = g % gr, gcol = g / gr;
        trow = grow * SR + i % SR; tcol = gcol * SC + i / SR;
    }
    unsigned row0 = trow * T, col0 = tcol * T, t = threadIdx.x;
    unsigned g = (t % 16) * 4, r = t / 16;
    float4 v[4];
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        const float4* src = (const float4*)(in + std::size_t(row0 + r + 16 * p) * n + col0 + g);
        if (NA) asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v[p].x), "=f"(v[p].y), "=f"(v[p].z), "=f"(v[p].w) : "l"(src));
        else if (PLAIN) v[p] = *src;
        else v[p] = __ldg(src);
    }
#pragma unroll
    for (int p = 0; p < 4; ++p) *(float4*)&tile[slot(r + 16 * p, g)] = v[p];
    __syncthreads();
    unsigned w = t / 32, lane = t % 32, k = lane % 8, q = lane / 8;
    unsigned rr = 32 * (w & 1) + 4 * k;
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        unsigned cl = 4 * ((w >> 1) + 4 * p) + q;
        float4 x = make_float4(tile[slot(rr, cl)], tile[slot(rr + 1, cl)], tile[slot(rr + 2, cl)], tile[slot(rr + 3, cl)]);
        float4* dst = (float4*)(out + std::size_t(col0 + cl) * n + row0 + rr);
        if (CS) __stcs(dst, x); else *dst = x;
    }
}

__global__ void flatcopy(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n4) {
    std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = __ldg(in + i);
}

int main(int argc, char** argv) {
    unsigned n = argc > 1 ? unsigned(std::atoi(argv[1])) : 8192;
    int reps = argc > 2 ? std::atoi(argv[2]) : 20;
    std::size_t elems = std::size_t(n) * n, bytes = elems * 4;
    std::vector<float> h(elems);
    for (std::size_t i = 0; i < elems; ++i) h[i] = float((i * 2654435761u) % 1000003) * 1e-3f;
    float *in, *out;
    CHECK(cudaMalloc(&in, bytes));
    CHECK(cudaMalloc(&out, bytes));
    CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    unsigned tiles = (n / T) * (n / T);
    struct V { std::string name; std::vector<double> us; bool tr; };
    std::vector<V> vs;
    std::vector<float> got(elems);
    int bad_total = 0;
    auto check = [&](const std::string& name) {
        CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
        std::size_t bad = 0;
        for (std::size_t r = 0; r < n; r += 7)
            for (std::size_t c = 0; c < n; ++c) bad += got[c * n + r] != h[r * n + c];
        if (bad) { std::fprintf(stderr, "%s: %zu wrong\n", name.c_str(), bad); bad_total++; }
    };
    auto run = [&](const std::string& name, auto launch, bool tr) {
        vs.push_back({name, time_launches(launch, out, bytes, 0xff, reps), tr});
        if (tr) check(name);
    };
    for (int round = 0; round < 2; ++round) {
        std::string s = round ? "#2" : "";
        run("d2d" + s, [&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); }, false);
        run("flatcopy" + s, [&] { flatcopy<<<unsigned(elems / 4 / 256), 256>>>((const float4*)in, (float4*)out, elems / 4); }, false);
        run("raster" + s, [&] { tv4<0, 1, 1, false><<<tiles, 256>>>(in, out, n); }, true);
        run("cols" + s, [&] { tv4<1, 1, 1, false><<<tiles, 256>>>(in, out, n); }, true);
        run("cols2d" + s, [&] { tv4<3, 1, 1, false><<<dim3(n / T, n / T), 256>>>(in, out, n); }, true);
        run("cols-na" + s, [&] { tv4<1, 1, 1, false, true><<<tiles, 256>>>(in, out, n); }, true);
        run("cols-cs" + s, [&] { tv4<1, 1, 1, true><<<tiles, 256>>>(in, out, n); }, true);
        run("super8x8" + s, [&] { tv4<2, 8, 8, false><<<tiles, 256>>>(in, out, n); }, true);
        run("super16x16" + s, [&] { tv4<2, 16, 16, false><<<tiles, 256>>>(in, out, n); }, true);
        run("super32x32" + s, [&] { tv4<2, 32, 32, false><<<tiles, 256>>>(in, out, n); }, true);
        run("super64x16" + s, [&] { tv4<2, 64, 16, false><<<tiles, 256>>>(in, out, n); }, true);
        run("super16x64" + s, [&] { tv4<2, 16, 64, false><<<tiles, 256>>>(in, out, n); }, true);
        run("super32x8" + s, [&] { tv4<2, 32, 8, false><<<tiles, 256>>>(in, out, n); }, true);
        run("super8x32" + s, [&] { tv4<2, 8, 32, false><<<tiles, 256>>>(in, out, n); }, true);
        run("cols-plain" + s, [&] { tv4<1, 1, 1, false, false, true><<<tiles, 256>>>(in, out, n); }, true);
        run("cols2d-na" + s, [&] { tv4<3, 1, 1, false, true><<<dim3(n / T, n / T), 256>>>(in, out, n); }, true);
    }
    double ref = median(vs[0].us);
    std::printf("variant,edge,median_us,min_us,max_us,vs_d2d\n");
    for (auto& v : vs)
        std::printf("%s,%u,%.2f,%.2f,%.2f,%.4f\n", v.name.c_str(), n, median(v.us),
                    *std::min_element(v.us.begin(), v.us.end()),
                    *std::max_element(v.us.begin(), v.us.end()), ref / median(v.us));
    return bad_total ? 1 : 0;
}
