#pragma once
// The solver's kernel (SphKernel.h: cubic spline or Wendland C2) tabulated over the squared distance s =
// |x|^2, for the solver's inner loops: no square root, no division and no branch per neighbour pair
// (SPlisHSPlasH tabulates its kernels the same way, over |x|). Linear interpolation between
// 4096 samples on [0, h^2]; relative error well below the solver's density tolerance
// (tests/core/spatial/test_kernel.cpp checks it against the analytic kernel).
#include "spatial/SphKernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace octo {

class KernelTable {
public:
    static constexpr int kSamples = 4096;

    explicit KernelTable(float supportRadius = 1.0f) { setKernel(SphKernel(supportRadius)); }

    void setSupportRadius(float h) { setKernel(SphKernel(h)); }
    void setKernel(const SphKernel& exact) {
        const float h = exact.supportRadius();
        h2_ = h * h;
        invDs_ = float(kSamples) / h2_;
        w0_ = exact.W0();
        // Two extra zero samples: s >= h^2 clamps onto them, so W = gradW = 0 outside the support.
        w_.assign(kSamples + 2, 0.0f);
        g_.assign(kSamples + 2, 0.0f);
        for (int i = 0; i < kSamples; ++i) {
            const float s = float(i) / invDs_;
            const float r = std::sqrt(s);
            w_[size_t(i)] = exact.W(r);
            // gradW(x) = factor(s) * x; at s = 0 use the q -> 0 limit of the inner branch.
            const float rr = std::max(r, 1e-3f * h);
            g_[size_t(i)] = exact.gradW(Vec3f(rr, 0.0f, 0.0f)).x() / rr;
        }
    }

    float W0() const { return w0_; }
    float W(float r2) const {
        float u = std::min(r2 * invDs_, float(kSamples));
        const int i = int(u);
        u -= float(i);
        return w_[size_t(i)] + u * (w_[size_t(i) + 1] - w_[size_t(i)]);
    }
    /// grad_i W(x_ij) = gradFactor(|x_ij|^2) * x_ij.
    float gradFactor(float r2) const {
        float u = std::min(r2 * invDs_, float(kSamples));
        const int i = int(u);
        u -= float(i);
        return g_[size_t(i)] + u * (g_[size_t(i) + 1] - g_[size_t(i)]);
    }

private:
    float h2_ = 1.0f, invDs_ = 1.0f, w0_ = 0.0f;
    std::vector<float> w_, g_;
};

} // namespace octo
