// Runs the CUDA source of stack/kmd/kernels/cuda/tiled_gemm.cu on the host, with CUDA's
// execution model for one block at a time: every thread of a block is a host thread,
// __syncthreads is a barrier over them, the dynamic shared memory one buffer per block. The
// test compiles it with g++ (-include of the kernel source) and calls the host_* launchers
// through ctypes, so the kernels' indexing, bounds and tiling are checked without a GPU.
#include <barrier>
#include <thread>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
#define __global__
#define __device__
#define __shared__
static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim, gridDim;
static std::barrier<>* block_barrier = nullptr;
alignas(16) float tile[64 * 1024];  // the dynamic shared memory of the running block
static void __syncthreads() { block_barrier->arrive_and_wait(); }

#include KERNEL_SOURCE

template <class F>
static void run(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, F body) {
    gridDim = {gx, gy, gz};
    blockDim = {bx, by, 1};
    for (unsigned z = 0; z < gz; ++z)
        for (unsigned y = 0; y < gy; ++y)
            for (unsigned x = 0; x < gx; ++x) {
                blockIdx = {x, y, z};
                std::barrier<> bar(static_cast<std::ptrdiff_t>(bx * by));
                block_barrier = &bar;
                std::vector<std::thread> threads;
                for (unsigned ty = 0; ty < by; ++ty)
                    for (unsigned tx = 0; tx < bx; ++tx)
                        threads.emplace_back([=] {
                            threadIdx = {tx, ty, 0};
                            body();
                        });
                for (auto& t : threads) t.join();
            }
}

extern "C" void host_refstack_gemm_tiled_f32(unsigned gx, unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by, const float* a,
                                             const float* b, float* y, int rows, int cols,
                                             int inner, long long sa_r, long long sa_k,
                                             long long sb_k, long long sb_c) {
    run(gx, gy, gz, bx, by,
        [=] { refstack_gemm_tiled_f32(a, b, y, rows, cols, inner, sa_r, sa_k, sb_k, sb_c); });
}

extern "C" void host_refstack_conv2d_tiled_f32(
    unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, const float* x,
    const float* wt, const float* bias, const float* res, float* y, int c, int h, int w, int m,
    int cg, int kh, int kw, int oh, int ow, int group, int sh, int sw, int pt, int pl, int dh,
    int dw, int has_bias, int has_res, int relu) {
    run(gx, gy, gz, bx, by, [=] {
        refstack_conv2d_tiled_f32(x, wt, bias, res, y, c, h, w, m, cg, kh, kw, oh, ow, group,
                                  sh, sw, pt, pl, dh, dw, has_bias, has_res, relu);
    });
}
