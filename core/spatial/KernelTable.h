#pragma once
// The solver's kernel (SphKernel.h: cubic spline or Wendland C2) tabulated over the squared distance
// s = |x|^2, for the solver's inner loops (TabulatedFunction). Linear interpolation between
// 4096 samples on [0, h^2]; relative error well below the solver's density tolerance
// (tests/core/spatial/test_kernel.cpp checks it against the analytic kernel).
#include "spatial/SphKernel.h"
#include "spatial/TabulatedFunction.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace octo {

class KernelTable {
public:
    static constexpr int kSamples = 4096;

    explicit KernelTable(float supportRadius = 1.0f) { setKernel(SphKernel(supportRadius)); }

    void setSupportRadius(float h) { setKernel(SphKernel(h)); }
    void setKernel(const SphKernel& exact) {
        const float h = exact.supportRadius();
        w0_ = exact.W0();
        w_.sample(h * h, kSamples, [&](int, float s) { return exact.W(std::sqrt(s)); });
        g_.sample(h * h, kSamples, [&](int, float s) {
            // gradW(x) = factor(s) * x; at s = 0 use the q -> 0 limit of the inner branch.
            const float rr = std::max(std::sqrt(s), 1e-3f * h);
            return exact.gradW(Vec3f(rr, 0.0f, 0.0f)).x() / rr;
        });
    }

    float W0() const { return w0_; }
    float W(float r2) const { return w_(r2); }
    Float4 W(Float4 r2) const { return w_(r2); }
    /// grad_i W(x_ij) = gradFactor(|x_ij|^2) * x_ij.
    float gradFactor(float r2) const { return g_(r2); }
    Float4 gradFactor(Float4 r2) const { return g_(r2); }
    /// The gradFactor table itself (callers that store its samples their own way).
    const TabulatedFunction& gradFactorTable() const { return g_; }
    /// W(r2) and gradFactor(r2), the same values, located once (both tables share their samples).
    std::pair<float, float> WAndGradFactor(float r2) const {
        const TabulatedFunction::Position p = w_.locate(r2);
        return {w_(p), g_(p)};
    }

private:
    float w0_ = 0.0f;
    TabulatedFunction w_, g_;
};

} // namespace octo
