// CUB's `cub::DeviceReduce::Sum` for f32 and i32, behind a C ABI the host library calls.
//
// The reference every reduction is compared with (the chapter's "The ceiling: CUB"). Built by
// host/build.rs with nvcc (CUDA 13, `-arch=sm_90`) into a static library and linked with the
// static CUDA runtime. cudart runs on the device's primary context, the one `cust`'s
// `Context::new` retains, so device pointers and streams from the Rust side are valid here.
//
// Every function returns a `cudaError_t` as int (0 = success); `lab_cub_error_string` names it.
// Each sum call is CUB's usual two-step: a temp-storage query, then the run on `stream`.
// `n` is 64-bit: CUB picks a 64-bit offset type, so arrays past 2^31 elements work.

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace {

template <typename T>
int temp_bytes(std::uint64_t n, std::size_t* bytes) {
    *bytes = 0;
    // A null temp pointer asks only for the size; no pointers are dereferenced.
    return static_cast<int>(cub::DeviceReduce::Sum(nullptr, *bytes, static_cast<const T*>(nullptr),
                                                   static_cast<T*>(nullptr), static_cast<std::int64_t>(n)));
}

template <typename T>
int sum(void* temp, std::size_t bytes, const T* in, T* out, std::uint64_t n, cudaStream_t stream) {
    cudaError_t e = cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<std::int64_t>(n), stream);
    if (e != cudaSuccess) {
        return static_cast<int>(e);
    }
    // Launch errors (bad grid, no kernel image for this GPU) surface here, not at the sync.
    return static_cast<int>(cudaPeekAtLastError());
}

}  // namespace

extern "C" {

/// Temp storage `DeviceReduce::Sum` needs for `n` floats, written to `*bytes`.
int lab_cub_sum_f32_temp_bytes(std::uint64_t n, std::size_t* bytes) { return temp_bytes<float>(n, bytes); }

/// Temp storage `DeviceReduce::Sum` needs for `n` ints, written to `*bytes`.
int lab_cub_sum_i32_temp_bytes(std::uint64_t n, std::size_t* bytes) { return temp_bytes<int>(n, bytes); }

/// Queues `*out = Σ in[0..n)` on `stream` (overwrites `*out`; no zeroing needed).
/// `temp`: device pointer to `bytes` bytes (at least what the query returned).
int lab_cub_sum_f32(void* temp, std::size_t bytes, const float* in, float* out, std::uint64_t n,
                    cudaStream_t stream) {
    return sum<float>(temp, bytes, in, out, n, stream);
}

/// As `lab_cub_sum_f32`, for ints (two's-complement wrapping, like the Rust kernels).
int lab_cub_sum_i32(void* temp, std::size_t bytes, const int* in, int* out, std::uint64_t n,
                    cudaStream_t stream) {
    return sum<int>(temp, bytes, in, out, n, stream);
}

/// cudart's name and description of an error code returned above (static strings).
const char* lab_cub_error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

/// The CUDA runtime version this shim was linked with (e.g. 13000), for the report header.
int lab_cub_runtime_version() {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return v;
}

}  // extern "C"
