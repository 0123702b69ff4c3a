#pragma once
// Friction between fluid and boundary samples after Akinci, Ihmsen, Akinci, Solenthaler & Teschner
// 2012, "Versatile rigid-fluid coupling for incompressible SPH", ACM TOG 31(4) 62, eq. 11: the
// artificial viscosity's form with the boundary's Psi_k as the neighbour's mass,
//   nu_b = sigma h c_s / (2 rho_i),  Pi_ik = -nu_b min(v_ik . x_ik, 0) / (|x_ik|^2 + 0.01 h^2),
//   a_i -= Psi_k Pi_ik grad W_ik,
// and a tracked body receives the opposite, m_i Psi_k Pi_ik grad W_ik. Evaluated inside the fused
// non-pressure pass (NonPressureForces.cpp), one inline call per pair.
#include "common/Types.h"
#include "spatial/Lanes.h"

namespace octo {

class BoundaryFriction_Akinci2012 {
public:
    /// sigma (SphConfig::boundaryFriction), support radius h, sound speed c_s, rest density rho0.
    void setParameters(float sigma, float h, float soundSpeed, float restDensity) {
        nuB_ = sigma * h * soundSpeed / (2.0f * restDensity);
        eps_ = 0.01f * h * h;
    }
    /// The friction acceleration Psi_k Pi_ik grad W_ik that particle i loses to boundary sample k
    /// (vx = v_ik . x_ik, r2 = |x_ik|^2, grad W_ik = gf x_ik); false (nothing) for a separating
    /// pair or sigma = 0.
    bool acceleration(Vec3f& out, float vx, float r2, float gf, float psiK, const Vec3f& xik) const {
        if (!(vx < 0.0f && nuB_ > 0.0f))
            return false;
        out = (psiK * (-nuB_ * vx / (r2 + eps_)) * gf) * xik;
        return true;
    }

    /// Four pairs side by side: the lanes where a friction acts (acceleration() true) and, there,
    /// the factor c of out = c x_ik, each lane bit for bit the scalar one.
    Int4 acting(Float4 vx) const { return (vx < broadcast4(0.0f)) & (Int4{} + (nuB_ > 0.0f ? -1 : 0)); }
    Float4 coefficient(Float4 vx, Float4 r2, Float4 gf, Float4 psiK) const {
        return psiK * (broadcast4(-nuB_) * vx / (r2 + broadcast4(eps_))) * gf;
    }

private:
    float nuB_ = 0.0f, eps_ = 0.0f;
};

} // namespace octo
