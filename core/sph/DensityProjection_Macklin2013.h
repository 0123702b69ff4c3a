#pragma once
// Position-based density correction after Macklin & Müller 2013, "Position Based Fluids" (ACM TOG
// 32(4) 104), eqs. 1-12, applied to the state a step starts from, before the pressure solve, as
// post-stabilization (Cline & Pai 2003, "Post-stabilization for rigid body simulation with contact
// and constraints", ICRA): positions move onto the constraint rho_i <= rho0, velocities stay.
//
// Why: a compression already present at the step's start (a region squeezed or overlapped from
// outside, what an unconverged step left) is not made by the step and does not shrink with dt. A
// pressure solve corrects it through velocity, ~ e d0 / dt, and its restarts at a shorter dt only
// made that faster (750 m/s at dt = 10 us for a 10 % squeeze). Moved onto the constraint here, the
// pressure solve that follows sees only the step's own compression and keeps every guard.
//
// It moves nothing while the state's largest density error is within the solver's tolerance eta
// (a converged step leaves about that); it works on FluidModel's neighbour lists and boundary
// samples (which do not move), each particle's total shift bounded by kMaxShift d0 so the lists
// built at the step's start stay valid. When to call it is the pressure solver's choice
// (Pcisph_Solenthaler2009::step and Dfsph_Bender2017::step: when the first attempt fails its
// guards).
#include "common/Types.h"

#include <initializer_list>
#include <vector>

namespace octo {

class FluidModel;
struct SphStepResult;

class DensityProjection_Macklin2013 {
public:
    /// The largest shift of a particle over one projection, in rest spacings d0.
    static constexpr float kMaxShift = 0.25f;

    struct Result {
        int iterations = 0;        // position updates done (0: the state was within the tolerance)
        float startError = 0.0f;   // max_i (rho_i - rho0) / rho0 of the state before
        float endError = 0.0f;     // ... and after
        bool boundReached = false; // stopped at the shift bound: lists to rebuild before going on
    };
    /// Measures the state's density error and, above tolerance, projects the positions until it
    /// is within tolerance, maxIterations updates were made or a particle reached the shift bound.
    Result project(FluidModel& model, float tolerance, int maxIterations);
    /// project, and where the shift bound stopped it the lists rebuilt at the shifted positions
    /// (FluidModel::prepareStep; sortedAlong follow the sort) and on from there, at most kRounds
    /// times. Records the start error and the updates in res; true if it moved any particle.
    bool projectWithRebuilds(FluidModel& model, float tolerance, int maxIterations, SphStepResult& res,
                             std::initializer_list<std::vector<float>*> sortedAlong);
    static constexpr int kRounds = 4;

private:
    /// Density of every particle at X; with multipliers, the PBF multiplier lambda_i / rho0 of the
    /// unilateral constraint C_i = max(0, rho_i / rho0 - 1) (eq. 11). Returns the largest error.
    float measure(const FluidModel& model, const Vec3f* X, bool multipliers);
    /// Xn = X + omega dx (eq. 12 with Akinci's boundary term), each particle within kMaxShift d0 of
    /// X0; true if a particle was held at that bound.
    bool displace(const FluidModel& model, const Vec3f* X, const Vec3f* X0, Vec3f* Xn) const;

    std::vector<float> multiplier_; // lambda_i / rho0 (m^5 / kg), 0 where not compressed
};

} // namespace octo
