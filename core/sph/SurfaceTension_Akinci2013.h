#pragma once
// Surface tension and adhesion after Akinci, Akinci & Teschner 2013, "Versatile surface tension
// and adhesion for SPH fluids", ACM TOG 32(6) 182 (SIGGRAPH Asia 2013).
//
// Per fluid pair (section 4, eq. 1-5), as an acceleration of particle i:
//   cohesion   a_coh  = -gamma m_j C(|x_ij|) x_ij / |x_ij|
//   curvature  a_curv = -gamma (n_i - n_j),   n_i = h sum_j (m_j / rho_j) grad W_ij  (colour-field
//                                             normal, scaled by h so it is resolution independent)
//   a_ij = K_ij (a_coh + a_curv),  K_ij = 2 rho0 / (rho_i + rho_j)  (stronger where the particle
//                                             deficiency at the surface lowers the density)
// Per fluid-boundary pair (section 5, eq. 6-7):
//   adhesion   a_adh  = -beta Psi_k A(|x_ik|) x_ik / |x_ik|   (Psi_k of Akinci et al. 2012)
// with the cohesion kernel C (eq. 2) and the adhesion kernel A (eq. 7), both with support h:
//   C(r) = 32 / (pi h^9) * { (h - r)^3 r^3                 for h/2 < r <= h
//                          { 2 (h - r)^3 r^3 - h^6 / 64     for 0 < r <= h/2
//   A(r) = 0.007 / h^3.25 * (-4 r^2 / h + 6 r - 2 h)^(1/4)   for h/2 < r <= h, else 0.
// The cohesion and curvature pair terms are antisymmetric (K_ij symmetric, equal masses), so
// the fluid's momentum is conserved; the adhesion reaction m_i beta Psi_k A x_ik / |x_ik| goes
// to the boundary particle (two-way for rigid bodies). The model's gamma and beta are not in
// SI units (the paper's terms mix m^4/(kg s^2) and m/s^2); their effect does not depend on the
// resolution at a fixed rho0, since m_j C and Psi_k A scale as rho0.
//
// The solver evaluates everything inside its non-pressure pass over the cached neighbour lists
// (NonPressureForces.cpp). Deviation for cost: the curvature term reads the normals
// n_i, n_j that the previous step's pass computed (the paper computes them in an extra pass just
// before); the lag is one dt, the pair term stays antisymmetric, and the extra neighbour pass,
// which cost as much as the whole non-pressure pass, is gone. Cohesion and adhesion are evaluated
// at the pair's predicted separation x_ij + dt v_ij, the configuration in which PCISPH's pressure
// acts: they balance that pressure, and balancing along different directions spun drops up.
// C(r)/r and A(r)/r are tabulated over r^2 (TabulatedFunction, as KernelTable): no square root per pair.
#include "common/Types.h"
#include "spatial/TabulatedFunction.h"

namespace octo {

class SurfaceTension_Akinci2013 {
public:
    static constexpr int kSamples = 4096;

    explicit SurfaceTension_Akinci2013(float supportRadius = 1.0f) { setSupportRadius(supportRadius); }
    void setSupportRadius(float h);
    float supportRadius() const { return h_; }
    /// gamma (SphConfig::surfaceTension), beta (SphConfig::adhesion) and the boundary samples'
    /// share w in the cohesion (SphConfig::wallCohesion; see cohesionAcceleration); 0 = off.
    void setParameters(float gamma, float beta, float wallCohesion) {
        gamma_ = gamma;
        beta_ = beta;
        wallCohesion_ = wallCohesion;
    }
    float gamma() const { return gamma_; }
    float beta() const { return beta_; }
    float wallCohesion() const { return wallCohesion_; }

    /// Analytic kernels of the paper (eq. 2 and 7).
    static float cohesionKernel(float r, float h);
    static float adhesionKernel(float r, float h);

    /// C(|x|) / |x| and A(|x|) / |x| from the tables, for |x|^2 = r2 (0 outside the support).
    float cohesionOverR(float r2) const { return c_(r2); }
    Float4 cohesionOverR(Float4 r2) const { return c_(r2); }
    float adhesionOverR(float r2) const { return a_(r2); }
    /// The pair potentials whose negative gradients are the cohesion and adhesion forces (per unit
    /// gamma m_i m_j K_ij and beta m_i Psi_k): U_C(r) = -int_r^h C(s) ds, U_A(r) = -int_r^h A(s) ds,
    /// for |x|^2 = r2 (0 outside the support). The blow-up check counts them in the energy.
    float cohesionPotential(float r2) const { return uc_(r2); }
    Float4 cohesionPotential(Float4 r2) const { return uc_(r2); }
    float adhesionPotential(float r2) const { return ua_(r2); }

    /// The tables of C(r)/r and U_C(r) themselves (sampled like KernelTable's, same range and count).
    const TabulatedFunction& cohesionTable() const { return c_; }
    const TabulatedFunction& cohesionPotentialTable() const { return uc_; }
    /// K_ij = 2 rho0 / (rho_i + rho_j) (rhoSum = rho_i + rho_j).
    static float densityCorrection(float rho0, float rhoSum) { return 2.0f * rho0 / rhoSum; }
    static Float4 densityCorrection(float rho0, Float4 rhoSum) { return broadcast4(2.0f * rho0) / rhoSum; }
    /// Acceleration of fluid particle i from fluid neighbour j: the curvature part
    /// -gamma (n_i - n_j) (colour-field normals; the caller multiplies by K_ij) and the cohesion part
    /// -gamma m_j C(|x_ij|) x_ij / |x_ij| (massJ = m_j; times K_ij too). The cohesion without K_ij is
    /// the gradient of cohesionPotential; the caller books the K_ij - 1 part as work of a source.
    /// Beyond the paper the cohesion also serves boundary particle k as if it were fluid of mass
    /// w Psi_k with rho_k = rho0 (wallCohesion w): with w = 0 (the paper) a wall acts as air for the
    /// cohesion, and a particle in a floor-wall edge is pulled out of it and pushed back by the
    /// pressure for ever (0.3-0.7 m/s in a settled dam break); w = 1 makes the wall neutral (contact
    /// angle 90 degrees before adhesion) and the edges settle (docs/BENCHMARKS.md).
    static Vec3f curvatureAcceleration(float gamma, const Vec3f& ni, const Vec3f& nj) {
        return -gamma * (ni - nj);
    }
    Vec3f cohesionAcceleration(const Vec3f& xij, float r2, float gamma, float massJ) const {
        return (-gamma * massJ * cohesionOverR(r2)) * xij;
    }
    /// Acceleration of fluid particle i from boundary particle k (adhesion, Psi_k = psiK).
    Vec3f adhesionAcceleration(const Vec3f& xik, float r2, float beta, float psiK) const {
        return (-beta * psiK * adhesionOverR(r2)) * xik;
    }

private:
    float h_ = 1.0f;
    float gamma_ = 0.0f, beta_ = 0.0f, wallCohesion_ = 0.0f;
    TabulatedFunction c_, a_;   // C(r)/r and A(r)/r over r^2
    TabulatedFunction uc_, ua_; // U_C(r) and U_A(r) at the same r^2
};

} // namespace octo
