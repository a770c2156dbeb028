// Shared-memory tiled matrix products, float32, whose tile is the launch's block: a block is
// T x T threads (T = blockDim.x = blockDim.y, read at run time, so one compiled kernel serves
// every tuned block size), each thread computes one output element, and the dynamic shared
// memory holds one T x T tile of each operand (2 * T * T floats). The grid covers the output:
// x = ceil(cols / T), y = ceil(rows / T), z = batches. Loaded by stack/kmd/kernels/cupy_tiled.py.

// C[z] (rows x cols, row-major) = A[z % groups] @ B(z): A element (r, k) at A[r*sa_r + k*sa_k],
// B element (k, c) produced by the loader. Out-of-range elements load as 0.
template <class LoadB>
__device__ float tiled_dot(const float* A, long long sa_r, long long sa_k, int rows, int inner,
                           const LoadB& load_b, int row, int col) {
    extern __shared__ float tile[];
    const int t = blockDim.x;
    float* as = tile;          // as[ty * t + kk] = A(row, k0 + kk)
    float* bs = tile + t * t;  // bs[kk * t + tx] = B(k0 + kk, col)
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.f;
    for (int k0 = 0; k0 < inner; k0 += t) {
        const int ka = k0 + tx, kb = k0 + ty;
        as[ty * t + tx] = (row < rows && ka < inner) ? A[row * sa_r + ka * sa_k] : 0.f;
        bs[ty * t + tx] = kb < inner ? load_b(kb, col) : 0.f;
        __syncthreads();
        for (int kk = 0; kk < t; ++kk) acc += as[ty * t + kk] * bs[kk * t + tx];
        __syncthreads();
    }
    return acc;
}

struct StridedB {  // a plain (possibly transposed) matrix
    const float* b;
    long long sb_k, sb_c;
    int cols;
    __device__ float operator()(int k, int c) const {
        return c < cols ? b[k * sb_k + c * sb_c] : 0.f;
    }
};

// Y = op(A) @ op(B) (rows x cols); transposes are the strides. The epilogue (alpha, beta * C,
// ReLU) runs after, as on the library path.
extern "C" __global__ void refstack_gemm_tiled_f32(const float* a, const float* b, float* y,
                                                   int rows, int cols, int inner,
                                                   long long sa_r, long long sa_k,
                                                   long long sb_k, long long sb_c) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const StridedB load_b{b, sb_k, sb_c, cols};
    const float acc = tiled_dot(a, sa_r, sa_k, rows, inner, load_b, row, col);
    if (row < rows && col < cols) y[(long long)row * cols + col] = acc;
}

struct ImplicitIm2col {  // B(k, p) of a convolution: k = (c, i, j) of the window, p = (oy, ox)
    const float* x;      // this image's first channel of this group
    int h, w, kh, kw, ow, sh, sw, pt, pl, dh, dw, pixels;
    __device__ float operator()(int k, int p) const {
        if (p >= pixels) return 0.f;
        const int c = k / (kh * kw), r = k % (kh * kw);
        const int iy = (p / ow) * sh - pt + (r / kw) * dh;
        const int ix = (p % ow) * sw - pl + (r % kw) * dw;
        if (iy < 0 || iy >= h || ix < 0 || ix >= w) return 0.f;
        return x[((long long)c * h + iy) * w + ix];
    }
};

// NCHW convolution as an implicit GEMM per (image, group) = blockIdx.z = n * group + g:
// Y[n, g*mg + m, p] = sum_k W[g*mg + m, k] * window(n, g, k, p), then + bias[channel] (when
// has_bias), + res[n, channel, p] (when has_res), ReLU (when relu). mg = m / group output
// channels per group, inner = cg * kh * kw, p over oh * ow output pixels.
extern "C" __global__ void refstack_conv2d_tiled_f32(
    const float* x, const float* wt, const float* bias, const float* res, float* y,
    int c, int h, int w, int m, int cg, int kh, int kw, int oh, int ow, int group,
    int sh, int sw, int pt, int pl, int dh, int dw, int has_bias, int has_res, int relu) {
    const int mg = m / group, inner = cg * kh * kw, pixels = oh * ow;
    const int n = blockIdx.z / group, g = blockIdx.z % group;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;  // output channel within the group
    const int col = blockIdx.x * blockDim.x + threadIdx.x;  // output pixel
    const ImplicitIm2col load_b{x + ((long long)n * c + (long long)g * cg) * h * w,
                                h, w, kh, kw, ow, sh, sw, pt, pl, dh, dw, pixels};
    const float* a = wt + (long long)g * mg * inner;
    float acc = tiled_dot(a, inner, 1, mg, inner, load_b, row, col);
    if (row >= mg || col >= pixels) return;
    const int channel = g * mg + row;
    const long long at = ((long long)n * m + channel) * pixels + col;
    if (has_bias) acc += bias[channel];
    if (has_res) acc += res[at];
    if (relu && acc < 0.f) acc = 0.f;
    y[at] = acc;
}
