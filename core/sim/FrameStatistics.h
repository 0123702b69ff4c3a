#pragma once
// The frames of a Simulation: where a frame ends, and the statistics of the steps of one frame
// with the bodies' mean velocities over it.
#include "common/Types.h"
#include "sim/Simulation.h"

#include <utility>
#include <vector>

namespace octo {

class RigidBodySystem;

/// The one frame-end tolerance (s): a time this close below a frame end has reached it. Two
/// tolerances (1e-6 frames here, 1e-7 s in the loops) disagreed: a time 2e-8..1e-7 s short of
/// an end was neither in the next frame nor short enough to step, and with timeStepMin =
/// timeStepMax = 5 ms time froze at 0.75 s (75 of 120 frames with 0 steps; issue 30).
inline constexpr double kFrameEndTolerance = 1e-7;

/// End of the frame containing time t (frames of length d); a time on a boundary starts the next.
double nextFrameEnd(double t, double d);

class FrameStatistics {
public:
    /// A frame starts at simulated time `time`: the bodies' positions now give their mean velocities.
    void begin(double time, const RigidBodySystem& bodies);
    void add(const StepStats& step);
    /// The frame ended at `time` after the steps added since begin(); `lastStep` is the latest step.
    void finish(double time, const StepStats& lastStep, const RigidBodySystem& bodies);
    /// Forgets every frame (a reset).
    void clear();
    /// The last finished frame.
    const FrameStats& last() const { return frame_; }
    /// Each body's velocity as its mean over the last finished frame (displacement / duration).
    void useFrameVelocities(std::vector<BodyStats>& bodies) const;

private:
    FrameStats frame_, running_;
    double dtSum_ = 0.0, itSum_ = 0.0, msSum_ = 0.0;
    double frameStartTime_ = 0.0;
    std::vector<std::pair<int, Vec3f>> frameStartPos_, frameVelocity_;
};

} // namespace octo
