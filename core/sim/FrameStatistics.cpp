#include "sim/FrameStatistics.h"

#include "rigid/RigidBodySystem.h"

#include <algorithm>
#include <cmath>

namespace octo {

double nextFrameEnd(double t, double d) {
    return (std::floor((t + kFrameEndTolerance) / d) + 1.0) * d;
}

void FrameStatistics::begin(double time, const RigidBodySystem& bodies) {
    running_ = FrameStats{};
    dtSum_ = itSum_ = msSum_ = 0.0;
    frameStartTime_ = time;
    frameStartPos_.clear();
    for (const auto& b : bodies.bodies())
        frameStartPos_.emplace_back(b->id(), b->position());
}

void FrameStatistics::add(const StepStats& s) {
    FrameStats& f = running_;
    dtSum_ += s.dt;
    itSum_ += s.iterations;
    msSum_ += s.physicsMs;
    f.maxDensityError = std::max(f.maxDensityError, s.maxDensityError);
    f.converged = f.converged && s.converged;
    f.contained += s.contained;
    f.escaped += s.escaped;
    f.maxSpeed = std::max(f.maxSpeed, s.maxSpeed);
    f.blowUp = f.blowUp || s.blowUp;
    f.energyGrowth = std::max(f.energyGrowth, s.energyGrowth);
    ++f.steps;
}

void FrameStatistics::finish(double time, const StepStats& lastStep, const RigidBodySystem& bodies) {
    FrameStats& f = running_;
    f.kineticEnergy = lastStep.kineticEnergy;
    // Body velocity reported for the frame: its mean over the frame (displacement / duration),
    // free of the step-to-step jitter of the contact and coupling impulses.
    frameVelocity_.clear();
    const double span = time - frameStartTime_;
    if (span > 0.0)
        for (const auto& b : bodies.bodies())
            for (const auto& [id, x0] : frameStartPos_)
                if (id == b->id())
                    frameVelocity_.emplace_back(id, ((b->position() - x0) / float(span)).eval());
    if (f.steps > 0) {
        f.meanDt = dtSum_ / f.steps;
        f.meanIterations = itSum_ / f.steps;
        f.meanPhysicsMs = msSum_ / f.steps;
    }
    frame_ = f;
}

void FrameStatistics::clear() {
    frame_ = running_ = FrameStats{};
    frameStartPos_.clear();
    frameVelocity_.clear();
}

void FrameStatistics::useFrameVelocities(std::vector<BodyStats>& bodies) const {
    for (BodyStats& b : bodies) // the last frame's mean velocity, else the current one
        for (const auto& [id, v] : frameVelocity_)
            if (id == b.id)
                b.velocity = v;
}

} // namespace octo
