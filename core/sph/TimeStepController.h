#pragma once
// The solver's time step: the bounds a step may take and how the next one adapts to the last.
//
//  - CFL: a particle moves at most cflFactor * d0 per step (docs/ALGORITHMS.md §2.1);
//  - a force bound dt <= cflFactor sqrt(d0 / |a|) on the acceleration the caller observes (the
//    fluid's non-pressure acceleration; with two-way bodies the total, see Pcisph_Solenthaler2009.cpp;
//    the rigid bodies' own bound: SimulationBodies::accelerationLimit);
//  - a scale in [0.02, 1] on both that follows the pressure solve: the iteration count (after
//    Ihmsen et al. 2010, "Boundary handling and adaptive time-stepping for PCISPH"), restarts and
//    a missed tolerance halve it, cheap steps let it grow back by 5 % per step;
//  - a restarted step is redone at dt / 2 (missed tolerance) or dt / 4 (a prediction that moved
//    too far or turned non-finite);
//  - everything clamped to [timeStepMin, timeStepMax].
// Pure arithmetic on a few floats: tests/core/sph/test_time_step_controller.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

namespace octo {

class TimeStepController {
public:
    struct Bounds {
        float cflFactor = 0.5f;
        float spacing = 0.02f; // d0, the rest spacing of the particles (m)
        float timeStepMin = 1e-5f, timeStepMax = 5e-3f;
    };
    /// The scale a run starts with (see start()).
    static constexpr float kStartScale = 0.1f;
    static constexpr float kMinScale = 0.02f;

    void setBounds(const Bounds& bounds) { bounds_ = bounds; }
    const Bounds& bounds() const { return bounds_; }

    /// A new run from the given state. It starts small and lets the iteration-aware control grow
    /// dt: the first steps must build the whole hydrostatic pressure from zero, which a large first
    /// dt cannot do in few iterations.
    void start(float maxSpeed, float maxAccel) {
        observe(maxSpeed, maxAccel);
        scale_ = kStartScale;
    }
    /// The committed state's fastest particle (m/s) and the acceleration the force bound uses.
    void observe(float maxSpeed, float maxAccel) {
        maxSpeed_ = maxSpeed;
        maxAccel_ = maxAccel;
    }
    float maxSpeed() const { return maxSpeed_; }
    float maxAccel() const { return maxAccel_; }
    float scale() const { return scale_; }

    /// The force bound cfl sqrt(d0 / |a|): an acceleration a displaces a point by at most cfl^2 d0
    /// within one step (a / 2 dt^2 <= cfl^2 d0 / 2). +infinity for a = 0.
    static float forceLimit(float cflFactor, float spacing, float accel) {
        return accel > 0.0f ? cflFactor * std::sqrt(spacing / accel) : std::numeric_limits<float>::infinity();
    }
    /// dt the next step will use: the CFL and force bounds times the scale, clamped.
    float next() const;
    /// The step's first attempt: next(), lowered to maxDt if smaller, never below timeStepMin.
    float planned(float maxDt) const { return std::max(bounds_.timeStepMin, std::min(next(), maxDt)); }
    /// A restart after a missed tolerance (dt / 2) or a prediction that went too far (dt / 4).
    float halved(float dt) const { return std::max(bounds_.timeStepMin, 0.5f * dt); }
    float quartered(float dt) const { return std::max(bounds_.timeStepMin, 0.25f * dt); }
    bool atMinimum(float dt) const { return dt <= bounds_.timeStepMin; }

    /// After a step (PCISPH: its iterations; DFSPH: its density sweeps): a restart or a missed
    /// tolerance halves the scale; a step that needed more than minIterations + 4 iterations shrinks
    /// it by 5 %, one with at most minIterations + 2 lets it grow by 5 % (Ihmsen et al. 2010; why at
    /// most 5 %: see the .cpp).
    void adaptToIterations(int iterations, int minIterations, bool restartedOrMissed);

private:
    void halveScale() { scale_ = std::max(kMinScale, 0.5f * scale_); }
    void growScale() { scale_ = std::min(1.0f, 1.05f * scale_); }

    Bounds bounds_;
    float maxSpeed_ = 0.0f, maxAccel_ = 0.0f;
    float scale_ = 1.0f; // < 1 after restarts / missed tolerance, recovers by 5 % per cheap step
};

} // namespace octo
