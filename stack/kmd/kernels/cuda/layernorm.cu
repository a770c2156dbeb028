// LayerNorm over the trailing `cols` elements of each row, float32: one block per row,
// blockDim a power of two, dynamic shared memory = blockDim.x floats. bias may be null
// (has_bias == 0). Loaded by stack/kmd/kernels/cupy_backend.py.
__device__ float refstack_block_sum(float v, float* buf) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    const float total = buf[0];
    __syncthreads();
    return total;
}

extern "C" __global__ void refstack_layernorm_rows_f32(
    const float* x, const float* scale, const float* bias, float* y,
    int rows, int cols, float eps, int has_bias) {
    extern __shared__ float buf[];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    float s = 0.f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) s += xr[i];
    const float mean = refstack_block_sum(s, buf) / cols;
    float v = 0.f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        const float d = xr[i] - mean;
        v += d * d;
    }
    const float rstd = rsqrtf(refstack_block_sum(v, buf) / cols + eps);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        const float o = (xr[i] - mean) * rstd * scale[i];
        yr[i] = has_bias ? o + bias[i] : o;
    }
}
