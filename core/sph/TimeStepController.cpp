#include "sph/TimeStepController.h"

namespace octo {

float TimeStepController::next() const {
    float dt = bounds_.timeStepMax;
    // CFL: a particle moves at most cfl * d0 per step (docs/ALGORITHMS.md §2.1).
    if (maxSpeed_ > 0.0f)
        dt = std::min(dt, bounds_.cflFactor * bounds_.spacing / maxSpeed_);
    // Force bound dt <= cfl sqrt(d0 / |a|) on the non-pressure accelerations only (gravity,
    // viscosity, friction, stirring). PCISPH's pressure acceleration is an outcome of dt: the
    // pressure that corrects a residual compression e within one step scales as e d0 / dt^2, so
    // bounding dt by it shrank dt, which raised the pressure, which shrank dt further (measured:
    // tank at r = 6.25 mm, dt 1 ms -> 40 us in 5 steps while the kinetic energy grew 20x).
    dt = std::min(dt, forceLimit(bounds_.cflFactor, bounds_.spacing, maxAccel_));
    return std::clamp(dt * scale_, bounds_.timeStepMin, bounds_.timeStepMax);
}

void TimeStepController::adaptToIterations(int iterations, int minIterations, bool restartedOrMissed) {
    // Iteration-aware dt (after Ihmsen et al. 2010): PCISPH rebuilds the pressure from zero every
    // step, so a deep column at a large dt needs many corrections (delta ~ 1/dt^2). Not faster
    // than 5 % per step: the residual density error e left by one step is corrected in the next
    // at a speed ~ e d0 / dt, so a sudden cut of dt kicks the fluid, which costs iterations, which
    // cut dt again. Shrinking by up to 2x per step made a tank at rest (0.6 m, r = 4.25 mm) ring
    // up to 1.2 m/s at 0.15 s; at most 5 %: 0.31 m/s (measured; the run is in the git history of
    // docs/BENCHMARKS.md).
    const int target = minIterations + 2;
    if (restartedOrMissed)
        halveScale();
    else if (iterations > target + 2)
        scale_ = std::max(kMinScale, 0.95f * scale_);
    else if (iterations <= target)
        growScale();
}

} // namespace octo
