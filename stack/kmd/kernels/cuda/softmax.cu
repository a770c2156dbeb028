// Row softmax over the last axis, float32: one block per row, blockDim a power of two,
// dynamic shared memory = blockDim.x floats. Loaded by stack/kmd/kernels/cupy_backend.py.
extern "C" __global__ void refstack_softmax_rows_f32(const float* x, float* y, int rows, int cols) {
    extern __shared__ float buf[];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    float m = -__int_as_float(0x7f800000);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, xr[i]);
    buf[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    m = buf[0];
    __syncthreads();
    float sum = 0.f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        const float e = expf(xr[i] - m);
        yr[i] = e;
        sum += e;
    }
    buf[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    const float inv = 1.f / buf[0];
    for (int i = threadIdx.x; i < cols; i += blockDim.x) yr[i] *= inv;
}
