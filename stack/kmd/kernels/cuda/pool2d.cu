// NCHW max / average pooling, float32: one thread per output element.
// Padding is implicit (never read); ceil-mode windows are clipped the same way.
// NaN propagates through max pooling exactly as with numpy.maximum (fmaxf would drop it).
// Loaded by stack/kmd/kernels/cupy_backend.py.
extern "C" __global__ void refstack_maxpool2d_f32(
    const float* x, float* y, long long total, int h, int w, int oh, int ow,
    int kh, int kw, int sh, int sw, int pt, int pl, int dh, int dw) {
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int ox = idx % ow;
    const int oy = (idx / ow) % oh;
    const float* plane = x + (idx / ((long long)ow * oh)) * h * w;
    float m = -__int_as_float(0x7f800000);
    for (int i = 0; i < kh; ++i) {
        const int iy = oy * sh - pt + i * dh;
        if (iy < 0 || iy >= h) continue;
        for (int j = 0; j < kw; ++j) {
            const int ix = ox * sw - pl + j * dw;
            if (ix < 0 || ix >= w) continue;
            const float v = plane[iy * w + ix];
            if (v > m || v != v) m = v;  // NaN wins once seen, as numpy.maximum
        }
    }
    y[idx] = m;
}

extern "C" __global__ void refstack_avgpool2d_f32(
    const float* x, float* y, long long total, int h, int w, int oh, int ow,
    int kh, int kw, int sh, int sw, int pt, int pl, int pb, int pr, int include_pad) {
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int ox = idx % ow;
    const int oy = (idx / ow) % oh;
    const float* plane = x + (idx / ((long long)ow * oh)) * h * w;
    const int y0 = oy * sh - pt, x0 = ox * sw - pl;
    float s = 0.f;
    for (int iy = max(y0, 0); iy < min(y0 + kh, h); ++iy)
        for (int ix = max(x0, 0); ix < min(x0 + kw, w); ++ix) s += plane[iy * w + ix];
    const int lo_y = include_pad ? -pt : 0, hi_y = include_pad ? h + pb : h;
    const int lo_x = include_pad ? -pl : 0, hi_x = include_pad ? w + pr : w;
    const int cnt = (min(y0 + kh, hi_y) - max(y0, lo_y)) * (min(x0 + kw, hi_x) - max(x0, lo_x));
    y[idx] = cnt > 0 ? s / (float)cnt : 0.f;  // a window entirely in padding gives 0
}
