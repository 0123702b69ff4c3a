#pragma once
// The solver's smoothing kernel, chosen by the parameter `kernel`: the cubic spline (Monaghan 1992,
// CubicSplineKernel.h) or the Wendland C2 kernel (Wendland 1995, "Piecewise polynomial, positive
// definite and compactly supported radial functions of minimal degree"), both with support h = 4r.
// Dehnen & Aly 2012 ("Improving convergence in smoothed particle hydrodynamics simulations without
// pairing instability", MNRAS 425) show that Wendland kernels have no pairing instability; for our
// start lattice, docs/validation/lattice_stability.py finds the cubic spline's simple cubic lattice
// unstable under pressure (a shear mode that changes no density) and Wendland C2's stable
// (docs/ALGORITHMS.md §10).
//
// This class serves the set-up code (mass, PCISPH's delta, boundary volumes); the hot loops read
// KernelTable, tabulated from it.
#include "common/Types.h"
#include "spatial/CubicSplineKernel.h"

#include <cmath>
#include <numbers>

namespace octo {

enum class KernelKind { CubicSpline, WendlandC2 };

class SphKernel {
public:
    explicit SphKernel(float supportRadius = 1.0f, KernelKind kind = KernelKind::CubicSpline)
        : kind_(kind), cubic_(supportRadius) {
        h_ = supportRadius;
        invH_ = 1.0f / h_;
        wendlandK_ = 21.0f / (2.0f * std::numbers::pi_v<float> * h_ * h_ * h_);
    }
    KernelKind kind() const { return kind_; }
    float supportRadius() const { return h_; }

    float W(float r) const {
        if (kind_ == KernelKind::CubicSpline)
            return cubic_.W(r);
        // W(q) = k (1 - q)^4 (1 + 4q), k = 21 / (2 pi h^3).
        const float q = r * invH_;
        if (q >= 1.0f)
            return 0.0f;
        const float t = 1.0f - q;
        return wendlandK_ * t * t * t * t * (1.0f + 4.0f * q);
    }
    float W(const Vec3f& r) const { return W(r.norm()); }
    float W0() const { return kind_ == KernelKind::CubicSpline ? cubic_.W0() : wendlandK_; }

    /// Gradient with respect to x_i of W(x_i - x_j), given r = x_i - x_j.
    Vec3f gradW(const Vec3f& r) const {
        if (kind_ == KernelKind::CubicSpline)
            return cubic_.gradW(r);
        // dW/dq = -20 k q (1 - q)^3.
        const float rl = r.norm();
        const float q = rl * invH_;
        if (q >= 1.0f || rl <= 1.0e-9f)
            return Vec3f::Zero();
        const float t = 1.0f - q;
        return (-20.0f * wendlandK_ * q * t * t * t / (rl * h_)) * r;
    }

    /// sum_j W(x_j) d^3 over a simple cubic lattice of spacing d (self included): the density of
    /// that lattice over rho0 when each particle carries the mass rho0 d^3. 1.0000 for the cubic
    /// spline at h = 2d, 1.0338 for Wendland C2 (docs/ALGORITHMS.md §10).
    float latticeSum(float d) const {
        const int reach = int(std::ceil(h_ / d));
        float sum = 0.0f;
        for (int i = -reach; i <= reach; ++i)
            for (int j = -reach; j <= reach; ++j)
                for (int k = -reach; k <= reach; ++k)
                    sum += W(d * Vec3f(float(i), float(j), float(k)).norm());
        return sum * d * d * d;
    }

private:
    KernelKind kind_;
    CubicSplineKernel cubic_;
    float h_ = 1.0f, invH_ = 1.0f, wendlandK_ = 0.0f;
};

} // namespace octo
