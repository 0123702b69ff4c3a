#pragma once
// Vorticity confinement after Fedkiw, Stam & Jensen 2001, "Visual simulation of smoke",
// SIGGRAPH 2001, section 3.2, in the SPH form of Macklin & Mueller 2013, "Position based
// fluids", ACM TOG 32(4) 104, section 6:
//   omega_i = sum_j V_j (v_i - v_j) x grad_i W_ij          (SPH curl, V_j = m_j / rho_j)
//   eta_i   = sum_j V_j (|omega_j| - |omega_i|) grad_i W_ij (gradient of the vorticity magnitude)
//   N_i     = eta_i / |eta_i|
//   a_i     = epsilon h |omega_i| (N_i x omega_i)
// The force pushes fluid around each vortex core in its own sense of rotation and so puts back
// the small-scale rotation that the kernel smoothing and the artificial viscosity take out.
// Scaling: Fedkiw's f = epsilon h (N x omega) is not an acceleration in SI units; with the
// extra |omega| the magnitude is epsilon times the centripetal acceleration |omega|^2 h of a
// vortex of angular rate |omega| at the kernel radius h, so epsilon is dimensionless and means
// the same at any resolution and flow speed. Being quadratic in |omega|, it fades faster than
// the viscous dissipation as a flow calms down: a stirred tank still comes to rest.
//
// Why confinement and not the micropolar model (Bender, Koschier, Kugelstadt & Weiler 2019,
// "Turbulent micropolar SPH fluids with foam", IEEE TVCG 25(6)):
//  - cost: confinement needs no extra neighbour pass: omega_i is summed in the solver's
//    non-pressure pass, and eta_i there uses the previous step's |omega_j| (a lag of one dt; one
//    float per particle follows the sort). Micropolar needs the curl of v and the curl of its own
//    angular velocity field, a per-particle vector state that is stored, sorted and integrated;
//  - stability with PCISPH's time step: the micropolar coupling term -2 nu_t omega / Theta is
//    stiff (explicit Euler needs dt < Theta / nu_t) and its angular state must be rolled back on
//    PCISPH's step restarts; confinement is stateless and its acceleration is bounded by
//    epsilon |omega|^2 h, which the solver's acceleration-based dt bound already sees;
//  - the drawback: confinement is not energy conserving (micropolar is). It injects energy
//    into existing vortices; the tests check that a closed tank's kinetic energy still decays.
#include "common/Types.h"

namespace octo {

struct VorticityConfinement_Fedkiw2001 {
    float epsilon = 0.0f; // SphConfig::vorticityConfinement, 0 = off

    /// omega_i contribution of neighbour j (gradFactor gf: grad_i W_ij = gf x_ij).
    static Vec3f curlTerm(const Vec3f& vij, const Vec3f& xij, float gf, float volumeJ) {
        return (volumeJ * gf) * vij.cross(xij);
    }
    /// eta_i contribution of neighbour j.
    static Vec3f gradientTerm(float omegaNormI, float omegaNormJ, const Vec3f& xij, float gf, float volumeJ) {
        return (volumeJ * (omegaNormJ - omegaNormI) * gf) * xij;
    }
    /// a_i = epsilon h |omega| (N x omega); zero where eta vanishes (no vortex core nearby).
    static Vec3f acceleration(const Vec3f& eta, const Vec3f& omega, float epsilon, float h) {
        const float etaNorm = eta.norm();
        if (!(etaNorm > 1e-12f))
            return Vec3f::Zero();
        return (epsilon * h * omega.norm() / etaNorm) * eta.cross(omega);
    }
};

} // namespace octo
