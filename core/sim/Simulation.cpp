#include "sim/Simulation.h"

#include "io/MeshWriter.h"
#include "io/ParticleIo.h"
#include "scene/SceneBodies.h"
#include "scene/SceneLibrary.h"
#include "sim/SimulationImpl.h"
#include "sim/StartSettling.h"
#include "surface/SurfaceReconstructor.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

namespace octo {

namespace {
/// Per particle, the fluid box it was sampled in if that block settles before t = 0
/// (StartSettling.h): at rest and standing on the container's floor; else an empty box (held).
std::vector<Aabb> restingBlocks(const SceneDescription& scene, const Vec3f& g, const std::vector<Vec3f>& x,
                                const std::vector<Vec3f>& v, float r) {
    std::vector<Aabb> boxes(x.size());
    int down = 0;
    for (int a = 1; a < 3; ++a)
        if (std::abs(g[a]) > std::abs(g[down]))
            down = a;
    if (g.squaredNorm() == 0.0f)
        return boxes;
    std::vector<Aabb> resting;
    for (const FluidBox& b : scene.fluidBoxes) {
        const bool onFloor = g[down] < 0.0f ? b.box.min[down] <= scene.container.min[down] + 2.0f * r
                                            : b.box.max[down] >= scene.container.max[down] - 2.0f * r;
        if (onFloor && b.velocity.squaredNorm() == 0.0f)
            resting.emplace_back(b.box.min.cwiseMax(scene.container.min),
                                 b.box.max.cwiseMin(scene.container.max));
    }
    for (size_t i = 0; i < x.size(); ++i) {
        if (v[i].squaredNorm() != 0.0f)
            continue;
        for (const Aabb& b : resting)
            if (b.enlarged(r).contains(x[i])) {
                boxes[i] = b;
                break;
            }
    }
    return boxes;
}
} // namespace

void Simulation::Impl::build() {
    const float r = params.getf(Param::particleRadius);
    scene.checkBudget(r, params.geti(Param::boundaryLayers)); // fluid + walls vs memory, before sampling
    std::vector<Vec3f> x, v;
    scene.sampleFluid(r, x, v);
    float vmax = 0.0f;
    for (const Vec3f& vi : v)
        vmax = std::max(vmax, vi.norm());
    soundSpeed = numericalSoundSpeed(params, scene.container, x, vmax);

    boundary.clear();
    solver = std::make_unique<SphSolver>(config(), boundary);
    solver->setBoundaryMotion([this](float dt) { bodies.coupling().pushKinematicVelocities(dt); });
    const int layers = params.geti(Param::boundaryLayers);
    const int walls = boundary.addObject(sampleBoxWalls(scene.container, 2.0f * r, layers), true,
                                         planarWallPsiScale(4.0f * r, 2.0f * r, layers, config().kernel));
    // The pressure extrapolated from the fluid (Pcisph_Solenthaler2009); with wallFit, Psi fitted so
    // that the rest lattice has rho0 in the container's edges and corners too (BoundaryModel::setWall).
    if (params.getb(Param::wallFit))
        boundary.setWall(walls, scene.container, 2.0f * r);
    else
        boundary.setWall(walls);
    // Rigid bodies: boundary objects after the walls; fluid inside them is removed.
    bodies.configure(scene.container, config().gravity, r, params.getf(Param::restDensity));
    try {
        bodies.build(sceneBodies, 0.0);
    } catch (const SceneError& e) { // name the file too, as the scene reader does (issue 30)
        throw SceneError((scene.sourcePath.empty() ? scene.name : scene.sourcePath) + ": " + e.what());
    }
    bodies.cullFluid(x, v);
    const std::vector<Aabb> settleBoxes = params.getf(Param::startSettling) > 0.0f
                                              ? restingBlocks(scene, gravityOf(params), x, v, r)
                                              : std::vector<Aabb>{};
    solver->setParticles(std::move(x), std::move(v));
    settleStart(*solver, settleBoxes, params.getf(Param::startSettling)); // StartSettling.h
    monitor.reset(*solver, gravityOf(params).norm(), vmax);
    frames.clear();
    steps = 0;
    escapedTotal = 0;
    last = StepStats{};
    status.clear();
    resetPending = false;
    lastStepEndedFrame = false;
    surface.invalidate();
}

const StepStats& Simulation::Impl::stepToward(double target) {
    const double remaining = target - solver->time();
    const double next = std::min(solver->nextTimeStep(),
                                 bodies.timeStepLimit(params.getf(Param::cflFactor), solver->nextTimeStep()));
    const double count = std::max(1.0, std::ceil(remaining / next - 1e-6));
    return step(float(remaining / count));
}

const StepStats& Simulation::Impl::step(float maxDt) {
    if (resetPending)
        build();
    // CFL on the bodies too (docs/ALGORITHMS.md §2.1 with max(|v_fluid|, |v_body|)).
    maxDt = std::min(maxDt, bodies.timeStepLimit(params.getf(Param::cflFactor), solver->nextTimeStep()));
    bodies.beforeStep(solver->state(), std::min(maxDt, solver->nextTimeStep()));
    monitor.beforeStep(*solver, bodies);
    const SphSolver::StepResult& r = solver->step(maxDt);
    if (!r.finite) {
        std::ostringstream m;
        m << "simulation became unstable (NaN/Inf) at t = " << solver->time()
          << " s; the last good state is kept: reset, or lower timeStepMax / cflFactor";
        status = m.str();
        throw SimulationError(status);
    }
    const bool drive = monitor.driven(bodies);
    bodies.afterStep(r.dt);
    ++steps;
    lastStepEndedFrame = false;
    surface.addPhysicsMs(r.msTotal);
    monitor.check(*solver, bodies, drive, last);
    last.time = solver->time();
    last.dt = r.dt;
    last.iterations = r.iterations;
    last.maxDensityError = r.maxDensityError;
    last.physicsMs = r.msTotal;
    last.converged = r.converged;
    last.contained = r.contained;
    last.escaped = r.escaped;
    escapedTotal += r.escaped;
    return last;
}

Simulation::Simulation(const SceneDescription& scene, const std::vector<std::string>& overrides)
    : impl_(std::make_unique<Impl>()) {
    scene.validate();
    Impl& s = *impl_;
    s.scene = scene;
    s.sceneBodies =
        parseBodiesJson(scene.bodiesJson, scene.sourcePath.empty() ? scene.name : scene.sourcePath);
    s.params = parametersForScene(scene, overrides);
    s.build();
}

Simulation::~Simulation() = default;

std::unique_ptr<Simulation> Simulation::fromSceneName(const std::string& name,
                                                      const std::vector<std::string>& overrides) {
    return std::make_unique<Simulation>(SceneLibrary::load(name), overrides);
}

std::unique_ptr<Simulation> Simulation::fromSceneFile(const std::string& path,
                                                      const std::vector<std::string>& overrides) {
    return std::make_unique<Simulation>(loadSceneFile(path), overrides);
}

void Simulation::reset() {
    impl_->build();
}

const StepStats& Simulation::step() {
    return impl_->step(std::numeric_limits<float>::infinity());
}

int Simulation::advanceFrame(double frameDuration) {
    Impl& s = *impl_;
    if (!(frameDuration > 0.0))
        throw std::invalid_argument("advanceFrame: frame duration must be > 0");
    if (s.resetPending)
        s.build();
    const double target = nextFrameEnd(s.solver->time(), frameDuration);
    s.frames.begin(s.solver->time(), s.bodies.system());
    s.bodies.resetForceMeans();
    while (s.solver->time() < target - kFrameEndTolerance)
        s.frames.add(s.stepToward(target));
    s.frames.finish(s.solver->time(), s.last, s.bodies.system());
    s.lastStepEndedFrame = true;
    s.surface.startFrameSurface(*s.solver, s.steps);
    return s.frames.last().steps;
}

const StepStats& Simulation::frameStep() {
    Impl& s = *impl_;
    if (s.resetPending)
        s.build();
    const double target = nextFrameEnd(s.solver->time(), frameDuration());
    if (s.lastStepEndedFrame)
        s.bodies.resetForceMeans();
    s.stepToward(target);
    if (s.solver->time() >= target - kFrameEndTolerance) {
        s.lastStepEndedFrame = true;
        s.surface.startFrameSurface(*s.solver, s.steps);
    }
    return s.last;
}

bool Simulation::frameEnded() const {
    return impl_->lastStepEndedFrame;
}

double Simulation::frameDuration() const {
    const double fps = impl_->scene.fps;
    return fps > 0.0 && std::isfinite(fps) ? 1.0 / fps : 1.0 / 60.0;
}

const FrameStats& Simulation::lastFrame() const {
    return impl_->frames.last();
}

void Simulation::setParameter(const std::string& name, double value) {
    Impl& s = *impl_;
    s.params.setConsistent(name, value);
    s.monitor.forgetReference(); // e.g. gravity changed: new reference
    const ParameterEffect effect = effectOf(name);
    if (effect.surface)
        s.surface.invalidate(); // rebuilt at once with the new settings; the old mesh is never shown again
    if (effect.reset) {
        s.resetPending = true;
    } else if (effect.solver) {
        s.solver->setConfig(s.config());
        s.bodies.setGravity(s.config().gravity);
    }
}

const ParameterSet& Simulation::parameters() const {
    return impl_->params;
}
const SceneDescription& Simulation::scene() const {
    return impl_->scene;
}
double Simulation::time() const {
    return impl_->solver->time();
}
uint64_t Simulation::stepCount() const {
    return impl_->steps;
}
const StepStats& Simulation::lastStep() const {
    return impl_->last;
}
size_t Simulation::fluidParticleCount() const {
    return impl_->solver->particleCount();
}
size_t Simulation::boundaryParticleCount() const {
    return impl_->boundary.particleCount();
}
Aabb Simulation::domain() const {
    return impl_->scene.container;
}
const std::string& Simulation::status() const {
    return impl_->status;
}
const std::string& Simulation::blowUpMessage() const {
    return impl_->monitor.message();
}
SphSolver& Simulation::solver() {
    return *impl_->solver;
}
BoundaryModel& Simulation::boundary() {
    return impl_->boundary;
}

size_t Simulation::nonFiniteCount() const {
    const FluidState& st = impl_->solver->state();
    return tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, st.size(), 8192), size_t(0),
        [&](const tbb::blocked_range<size_t>& r, size_t n) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                n += (!st.positions[i].allFinite() || !st.velocities[i].allFinite()) ? 1 : 0;
            return n;
        },
        std::plus<size_t>());
}

size_t Simulation::escapedCount() const {
    return impl_->escapedTotal;
}

FrameSnapshotPtr Simulation::snapshot() const {
    Impl& s = *impl_;                          // the surface cache is rebuilt lazily
    s.surface.applyForced(*s.solver, s.steps); // first: it re-sorts the particles (neighbour-list refresh)
    auto snap = std::make_shared<FrameSnapshot>();
    const FluidState& st = s.solver->state();
    snap->step = s.steps;
    snap->time = s.solver->time();
    snap->positions = st.positions;
    snap->velocities = st.velocities;
    snap->densities = st.densities;
    snap->pressures = st.pressures;
    const auto bp = s.boundary.positions();
    snap->boundaryPositions.assign(bp.begin(), bp.end());
    snap->bodies = s.bodies.snapshot();
    snap->domain = s.scene.container;
    snap->status = s.status;
    snap->stats = {{"#FP", double(st.size())},
                   {"#SP", double(s.boundary.particleCount())},
                   {"#bodies", double(s.bodies.size())},
                   {"#SP bodies", double(s.bodies.sampleCount())},
                   {"Tps ms", s.last.physicsMs},
                   {"dt", s.last.dt},
                   {"iterations", double(s.last.iterations)},
                   {"maxDensityError", s.last.maxDensityError},
                   {"time", s.solver->time()}};
    s.surface.addToSnapshot(*snap, st); // the latest finished frame's surface
    return snap;
}

const SurfaceResult* Simulation::surface() {
    return impl_->surface.surfaceNow(*impl_->solver, impl_->steps);
}

FrameSurfacePtr Simulation::frameSurface() const {
    return impl_->surface.frameSurface();
}

void Simulation::setSurfaceDiagnostics(bool on) {
    impl_->surface.setDiagnostics(on);
}

void Simulation::setSurfacePipelined(bool pipelined) {
    impl_->surface.setPipelined(pipelined);
}

uint64_t Simulation::surfaceBuilds() const {
    return impl_->surface.builds();
}

void Simulation::waitForSurface() {
    impl_->surface.wait();
}

void Simulation::reconstructNow() {
    impl_->surface.invalidate();
}

void Simulation::exportMesh(const std::string& path) {
    const SurfaceResult* r = surface();
    if (!r)
        throw std::runtime_error(impl_->surface.error().empty()
                                     ? "no surface mesh: the surface is off (surfaceEnabled)"
                                     : impl_->surface.error());
    writeMesh(path, r->mesh);
}

std::string Simulation::surfaceWarning() const {
    if (!impl_->surface.error().empty())
        return impl_->surface.error();
    return surfaceSettingsFromParameters(impl_->params).warning();
}

void Simulation::exportParticles(const std::string& path) const {
    const FluidState& st = impl_->solver->state();
    ParticleData d;
    d.positions = st.positions;
    d.velocities = st.velocities;
    d.scalars["density"] = st.densities;
    d.scalars["pressure"] = st.pressures;
    writeParticlesPly(path, d);
}

} // namespace octo
