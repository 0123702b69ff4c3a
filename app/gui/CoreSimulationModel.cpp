// The adapter from the worker's SimulationModel interface to the core octo::Simulation facade.
// The only file of the app that calls the solver.
#include "SimulationModel.h"

#include "io/MeshWriter.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "rigid/RigidBodySystem.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"

#include "ScenePresets.h" // after the core: Qt's emit macro breaks oneTBB's headers

namespace octo::app {

void SimulationModel::exportMesh(const std::string& path) const {
    const FrameSnapshotPtr frame = snapshot();
    if (!frame || frame->surfaceMesh.empty())
        throw std::runtime_error("no surface mesh to export (is the surface on?)");
    writeMeshObj(path, frame->surfaceMesh, "t = " + std::to_string(frame->time) + " s");
}

const std::vector<std::string>& builtinSceneNames() {
    static const std::vector<std::string> names = SceneLibrary::names();
    return names;
}

namespace {
class CoreSimulationModel : public SimulationModel {
public:
    explicit CoreSimulationModel(std::unique_ptr<Simulation> sim) : sim_(std::move(sim)) {
        // Surface once per simulated frame, built serially at the frame's end: on the 2-core
        // machine the pipelined stage (Simulation::setSurfacePipelined) only competed with the
        // physics for the same cores and lost 7-21 % of the frame rate (docs/BENCHMARKS.md §5,
        // "Serial against pipelined").
        sim_->setSurfacePipelined(false);
    }
    void reset() override { sim_->reset(); }
    /// Steps land on the scene's frames; the surface is rebuilt once per frame, not per publish.
    void step() override { sim_->frameStep(); }
    void setParameter(const std::string& name, double value) override { sim_->setParameter(name, value); }
    const ParameterSet& parameters() const override { return sim_->parameters(); }
    FrameSnapshotPtr snapshot() const override { return sim_->snapshot(); }
    double time() const override { return sim_->time(); }
    uint64_t stepCount() const override { return sim_->stepCount(); }
    bool frameEnded() const override { return sim_->frameEnded(); }
    double frameDuration() const override { return sim_->frameDuration(); }
    std::string healthProblem() const override {
        if (!sim_->status().empty())
            return sim_->status();
        if (!sim_->blowUpMessage().empty()) // energy grew without a source (Simulation::blowUpMessage)
            return sim_->blowUpMessage();
        const size_t bad = sim_->nonFiniteCount();
        if (bad)
            return std::to_string(bad) + " particles have NaN/Inf positions or velocities";
        // A few particles grazing a wall are outside the container box by a fraction of r;
        // a blow-up throws many of them out, so stop only at a clear fraction (2 %).
        const size_t escaped = sim_->escapedCount(), count = sim_->fluidParticleCount();
        if (escaped > std::max<size_t>(count / 50, 10))
            return std::to_string(escaped) + " of " + std::to_string(count) + " particles left the domain";
        return {};
    }
    void exportParticles(const std::string& path) const override { sim_->exportParticles(path); }
    void exportMesh(const std::string& path) const override { sim_->exportMesh(path); }
    void reconstructNow() override { sim_->reconstructNow(); }
    void setSurfaceDiagnostics(bool on) override { sim_->setSurfaceDiagnostics(on); }

    // Dragging and stirring (Simulation: spring toward the target, Akinci 2012 coupling).
    bool supportsDrag() const override { return true; }
    void beginDrag(int bodyId, const Vec3f& bodySpacePoint) override {
        sim_->beginDrag(bodyId, bodySpacePoint);
    }
    void setDragTarget(const Vec3f& worldPoint) override { sim_->setDragTarget(worldPoint); }
    void endDrag() override { sim_->endDrag(); }
    void setDragResponseTime(double seconds) override {
        sim_->rigidBodies().dragSettings().responseTime = float(seconds);
    }
    bool supportsStir() const override { return true; }
    void stir(const Vec3f& rayOrigin, const Vec3f& rayDir, float radius, float strength,
              const Vec3f& cursorVelocity) override {
        if (cursorVelocity.squaredNorm() > 0.0f)
            sim_->stir(rayOrigin, rayDir, radius, cursorVelocity);
        else
            sim_->stir(rayOrigin, rayDir, radius, strength);
    }

    bool supportsBodies() const override { return true; }
    int addBody(const std::string& shape, const Vec3f& position, float size, float density) override {
        return sim_->addBody(shape, position, size, density);
    }
    void removeBody(int bodyId) override { sim_->removeBody(bodyId); }

private:
    std::unique_ptr<Simulation> sim_;
};
} // namespace

ModelFactory defaultModelFactory() {
    return [](const std::string& scene,
              const std::vector<std::string>& overrides) -> std::unique_ptr<SimulationModel> {
        const bool isFile = isSceneFile(scene);
        auto sim = isFile ? Simulation::fromSceneFile(scene, overrides)
                          : Simulation::fromSceneName(scene, overrides);
        if (!sim)
            throw std::runtime_error("scene '" + scene + "' could not be built");
        return std::make_unique<CoreSimulationModel>(std::move(sim));
    };
}

} // namespace octo::app
