#pragma once
// Artificial viscosity after Monaghan 1992, "Smoothed particle hydrodynamics", Annu. Rev. Astron.
// Astrophys. 30, 543-574, eq. 4.1-4.2, between fluid particles:
//   Pi_ij = -nu min(v_ij . x_ij, 0) / (|x_ij|^2 + 0.01 h^2),  nu = 2 alpha h c_s / (rho_i + rho_j),
//   a_i  -= sum_j m_j Pi_ij grad W_ij,
// with rho_i + rho_j taken as 2 rho0 and the numerical speed of sound c_s (SphConfig::soundSpeed).
// Only approaching pairs (v_ij . x_ij < 0) are damped. Evaluated inside the fused non-pressure
// pass (NonPressureForces.cpp), one inline call per pair.
#include "common/Types.h"
#include "spatial/Lanes.h"

namespace octo {

class ArtificialViscosity_Monaghan1992 {
public:
    /// alpha (SphConfig::viscosity), support radius h, sound speed c_s, rest density rho0.
    void setParameters(float alpha, float h, float soundSpeed, float restDensity) {
        nu_ = alpha * h * soundSpeed / restDensity;
        eps_ = 0.01f * h * h;
    }
    /// a_i -= this for fluid neighbour j; vx = v_ij . x_ij, r2 = |x_ij|^2, grad W_ij = gf x_ij.
    /// Branch-free (whether a pair approaches is a coin toss the predictor loses about half the
    /// time): a separating pair subtracts a signed zero, which leaves a sum that started at +0 bit
    /// for bit as the branch that skipped it (x - 0 = x, +0 - (+/-0) = +0; a sum that starts at +0
    /// never holds -0).
    void accumulate(Vec3f& a, float vx, float r2, float gf, float massJ, const Vec3f& xij) const {
        a -= coefficient(vx, r2, gf, massJ) * xij;
    }
    /// The pair's term is coefficient * x_ij (0 for a separating pair).
    float coefficient(float vx, float r2, float gf, float massJ) const {
        const float approach = vx < 0.0f ? vx : 0.0f; // NaN: 0, as the branch skipped it
        return massJ * (-nu_ * approach / (r2 + eps_)) * gf;
    }
    /// Four pairs' coefficients, each lane bit for bit the scalar one.
    Float4 coefficient(Float4 vx, Float4 r2, Float4 gf, float massJ) const {
        const Float4 zero = broadcast4(0.0f);
        const Float4 approach = select4(vx < zero, vx, zero);
        return broadcast4(massJ) * (broadcast4(-nu_) * approach / (r2 + broadcast4(eps_))) * gf;
    }

private:
    float nu_ = 0.0f, eps_ = 0.0f;
};

} // namespace octo
