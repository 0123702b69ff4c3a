#pragma once
// A deterministic stand-in for the solver: a block of particles with an animated wave on top,
// λ and surface flags from the distance to the free surface, a coarse octree, a box-shaped
// surface mesh and one draggable box body. It is NOT physics; it exists so the GUI, the
// renderer and the recorder can be tested and demonstrated without the core solver.
#include "SimulationModel.h"

namespace octo::app {

class SyntheticModel : public SimulationModel {
public:
    /// particlesPerAxis^3 particles (roughly; the wave trims the top).
    explicit SyntheticModel(int particlesPerAxis = 16);

    void reset() override;
    void step() override;
    void setParameter(const std::string& name, double value) override;
    const ParameterSet& parameters() const override { return params_; }
    FrameSnapshotPtr snapshot() const override;
    double time() const override { return time_; }
    uint64_t stepCount() const override { return steps_; }
    /// Like a real model, several steps make a frame: 4 steps of 5 ms, 50 frames per second.
    bool frameEnded() const override { return steps_ > 0 && steps_ % 4 == 0; }
    double frameDuration() const override { return 0.02; }
    std::string healthProblem() const override { return forcedProblem_; }

    bool supportsDrag() const override { return true; }
    void beginDrag(int bodyId, const Vec3f& bodySpacePoint) override;
    void setDragTarget(const Vec3f& worldPoint) override;
    void endDrag() override;
    void reconstructNow() override { ++reconstructions_; }
    void exportParticles(const std::string& path) const override;

    /// Test hooks.
    void setStepDelayMs(int ms) { stepDelayMs_ = ms; }
    void forceProblem(const std::string& message) { forcedProblem_ = message; }
    int reconstructions() const { return reconstructions_; }
    Vec3f bodyPosition() const { return bodyPos_; }
    int parameterEdits() const { return parameterEdits_; }

private:
    int n_;
    ParameterSet params_;
    double time_ = 0.0;
    uint64_t steps_ = 0;
    int stepDelayMs_ = 0;
    int reconstructions_ = 0;
    int parameterEdits_ = 0;
    std::string forcedProblem_;
    Vec3f bodyPos_{0.75f, 0.25f, 0.25f};
    Vec3f dragTarget_ = Vec3f::Zero();
    Vec3f dragOffset_ = Vec3f::Zero();
    bool dragging_ = false;
    std::shared_ptr<const TriangleMesh> bodyMesh_;
};

/// A closed axis-aligned box mesh (12 triangles, outward winding).
TriangleMesh boxMesh(const Vec3f& lo, const Vec3f& hi);

} // namespace octo::app
