#pragma once
// Cubic spline kernel (Monaghan 1992) in 3D with compact support h (W = 0 for |r| >= h),
// written in the support-radius form used by SPlisHSPlasH: q = |r|/h,
//   W(q) = k (6q^3 - 6q^2 + 1)   for 0 <= q <= 1/2,   k = 8 / (pi h^3)
//   W(q) = 2k (1 - q)^3         for 1/2 < q <= 1.
#include "common/Types.h"
#include <numbers>

namespace octo {

class CubicSplineKernel {
public:
    explicit CubicSplineKernel(float supportRadius = 1.0f) { setSupportRadius(supportRadius); }

    void setSupportRadius(float h) {
        h_ = h;
        invH_ = 1.0f / h;
        const float pi = std::numbers::pi_v<float>;
        k_ = 8.0f / (pi * h * h * h);
        l_ = 48.0f / (pi * h * h * h);
        w0_ = k_;
    }
    float supportRadius() const { return h_; }

    float W(float r) const {
        const float q = r * invH_;
        if (q >= 1.0f)
            return 0.0f;
        if (q <= 0.5f)
            return k_ * (6.0f * q * q * (q - 1.0f) + 1.0f);
        const float t = 1.0f - q;
        return k_ * 2.0f * t * t * t;
    }
    float W(const Vec3f& r) const { return W(r.norm()); }
    /// W(0): a particle's own contribution to its density.
    float W0() const { return w0_; }

    /// Gradient with respect to x_i of W(x_i - x_j), given r = x_i - x_j.
    Vec3f gradW(const Vec3f& r) const {
        const float rl = r.norm();
        const float q = rl * invH_;
        if (q >= 1.0f || rl <= 1.0e-9f)
            return Vec3f::Zero();
        const Vec3f gradq = r * (1.0f / (rl * h_));
        if (q <= 0.5f)
            return (l_ * q * (3.0f * q - 2.0f)) * gradq;
        const float t = 1.0f - q;
        return (-l_ * t * t) * gradq;
    }

private:
    float h_ = 1.0f, invH_ = 1.0f, k_ = 0.0f, l_ = 0.0f, w0_ = 0.0f;
};

} // namespace octo
