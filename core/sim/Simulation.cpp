#include "sim/Simulation.h"

#include "io/ParticleIo.h"
#include "scene/Scene.h"
#include "scene/SceneBodies.h"
#include "scene/SceneLibrary.h"
#include "sim/SimulationBodies.h"
#include "sph/BoundaryModel.h"
#include "sph/PcisphSolver.h"
#include "io/MeshWriter.h"
#include "surface/SurfaceReconstructor.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <functional>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace octo {

namespace {
constexpr size_t kMaxParticles = 20'000'000; // refuse scenes that would exhaust memory
}

struct Simulation::Impl {
    SceneDescription scene;
    ParameterSet params;
    BoundaryModel boundary;
    SimulationBodies bodies{boundary};
    std::vector<BodyDescription> sceneBodies;
    std::unique_ptr<PcisphSolver> solver;
    int walls = -1;
    uint64_t steps = 0;
    StepStats last;
    FrameStats frame;
    bool resetPending = false;
    std::string status;
    float soundSpeed = 20.0f;

    // --- surface ---
    SurfaceReconstructor surface;
    bool surfaceDirty = true;
    std::string surfaceError;

    /// Rebuilds the surface when stale; false when it is off or failed (message in surfaceError).
    bool updateSurface() {
        if (!params.getb("surfaceEnabled"))
            return false;
        if (!surfaceDirty)
            return surfaceError.empty();
        surfaceDirty = false;
        surfaceError.clear();
        const FluidState& st = solver->state();
        try {
            surface.reconstruct(st.positions, st.densities, surfaceSettingsFromParameters(params));
        } catch (const std::exception& e) {
            // A surface that cannot be built (e.g. a baseline grid too large) must not stop the fluid.
            surfaceError = std::string("surface reconstruction failed: ") + e.what();
            surface.result() = SurfaceResult{};
            return false;
        }
        return true;
    }
    // --- surface end ---

    PcisphSolver::Config solverConfig() const {
        PcisphSolver::Config c;
        c.particleRadius = params.getf("particleRadius");
        c.restDensity = params.getf("restDensity");
        c.densityErrorTolerance = params.getf("densityErrorTolerance");
        c.minIterations = params.geti("minIterations");
        c.maxIterations = std::max(params.geti("maxIterations"), c.minIterations);
        c.timeStepMin = params.getf("timeStepMin");
        c.timeStepMax = std::max(params.getf("timeStepMax"), c.timeStepMin);
        c.cflFactor = params.getf("cflFactor");
        c.viscosity = params.getf("viscosity");
        c.boundaryFriction = params.getf("boundaryFriction");
        c.gravity = Vec3f(params.getf("gravityX"), params.getf("gravityY"), params.getf("gravityZ"));
        c.soundSpeed = soundSpeed;
        c.domain = scene.container;
        // Centres may overlap the wall plane by up to r/2 (the wall gap is as compressible as
        // the fluid, eta); beyond that a particle has leaked and the safety net puts it back.
        c.containment = scene.container.enlarged(0.5f * c.particleRadius);
        return c;
    }

    void build() {
        const float r = params.getf("particleRadius");
        const size_t estimate = scene.estimateParticleCount(r);
        if (estimate > kMaxParticles) {
            std::ostringstream s;
            s << "scene '" << scene.name << "' at particle radius " << r << " m needs about " << estimate
              << " particles (limit " << kMaxParticles << "): choose a larger radius";
            throw SceneError(s.str());
        }
        std::vector<Vec3f> x, v;
        scene.sampleFluid(r, x, v);
        // Numerical speed of sound for the artificial viscosity (Monaghan 1994: c = 10 sqrt(g H)),
        // from the initial fluid height above the container floor and the initial speeds.
        float top = scene.container.min.y(), vmax = 0.0f;
        for (size_t i = 0; i < x.size(); ++i) {
            top = std::max(top, x[i].y());
            vmax = std::max(vmax, v[i].norm());
        }
        const float g =
            Vec3f(params.getf("gravityX"), params.getf("gravityY"), params.getf("gravityZ")).norm();
        soundSpeed =
            std::max(1.0f, 10.0f * std::max(std::sqrt(2.0f * g * (top - scene.container.min.y())), vmax));

        boundary.clear();
        solver = std::make_unique<PcisphSolver>(solverConfig(), boundary);
        const int layers = params.geti("boundaryLayers");
        walls = boundary.addObject(sampleBoxWalls(scene.container, 2.0f * r, layers), true,
                                   planarWallPsiScale(4.0f * r, 2.0f * r, layers));
        // Rigid bodies: boundary objects after the walls; fluid inside them is removed.
        bodies.configure(scene.container, solverConfig().gravity, r, params.getf("restDensity"));
        bodies.build(sceneBodies, 0.0);
        bodies.cullFluid(x, v);
        solver->setParticles(std::move(x), std::move(v));
        steps = 0;
        last = StepStats{};
        frame = FrameStats{};
        status.clear();
        resetPending = false;
        surfaceDirty = true; // --- surface ---
    }

    const StepStats& step(float maxDt) {
        if (resetPending)
            build();
        // CFL on the bodies too (ALGORITHMS.md section 2 with max(|v_fluid|, |v_body|)).
        maxDt = std::min(maxDt, bodies.timeStepLimit(params.getf("cflFactor"), solver->nextTimeStep()));
        bodies.beforeStep(solver->state(), std::min(maxDt, solver->nextTimeStep()));
        const PcisphSolver::StepResult& r = solver->step(maxDt);
        if (!r.finite) {
            std::ostringstream m;
            m << "simulation became unstable (NaN/Inf) at t = " << solver->time()
              << " s; the last good state is kept: reset, or lower timeStepMax / cflFactor";
            status = m.str();
            throw SimulationError(status);
        }
        bodies.afterStep(r.dt);
        ++steps;
        surfaceDirty = true; // --- surface ---
        last.time = solver->time();
        last.dt = r.dt;
        last.iterations = r.iterations;
        last.maxDensityError = r.maxDensityError;
        last.physicsMs = r.msTotal;
        last.converged = r.converged;
        last.contained = r.contained;
        return last;
    }
};

Simulation::Simulation(const SceneDescription& scene, const std::vector<std::string>& overrides)
    : impl_(std::make_unique<Impl>()) {
    scene.validate();
    Impl& s = *impl_;
    s.scene = scene;
    s.sceneBodies = parseBodiesJson(scene.bodiesJson, scene.sourcePath.empty() ? scene.name : scene.sourcePath);
    s.params.set("particleRadius", scene.particleRadius);
    s.params.set("gravityX", scene.gravity.x());
    s.params.set("gravityY", scene.gravity.y());
    s.params.set("gravityZ", scene.gravity.z());
    for (const auto& [name, value] : scene.parameters)
        s.params.setFromString(name, value);
    for (const std::string& o : overrides)
        s.params.parseAssignment(o);
    s.params.validate(); // after all assignments: minIterations <= maxIterations ...
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
    const double target = (std::floor(s.solver->time() / frameDuration + 1e-6) + 1.0) * frameDuration;
    FrameStats f;
    double dtSum = 0.0, itSum = 0.0, msSum = 0.0;
    while (s.solver->time() < target - 1e-7) {
        // Even out the remaining steps so the frame ends exactly on its time.
        const double remaining = target - s.solver->time();
        const double next = std::min(s.solver->nextTimeStep(),
                                     s.bodies.timeStepLimit(s.params.getf("cflFactor"), s.solver->nextTimeStep()));
        const double steps = std::max(1.0, std::ceil(remaining / next - 1e-6));
        s.step(float(remaining / steps));
        dtSum += s.last.dt;
        itSum += s.last.iterations;
        msSum += s.last.physicsMs;
        f.maxDensityError = std::max(f.maxDensityError, s.last.maxDensityError);
        f.converged = f.converged && s.last.converged;
        f.contained += s.last.contained;
        ++f.steps;
    }
    if (f.steps > 0) {
        f.meanDt = dtSum / f.steps;
        f.meanIterations = itSum / f.steps;
        f.meanPhysicsMs = msSum / f.steps;
    }
    s.frame = f;
    return f.steps;
}

const FrameStats& Simulation::lastFrame() const {
    return impl_->frame;
}

void Simulation::setParameter(const std::string& name, double value) {
    Impl& s = *impl_;
    s.params.setConsistent(name, value);
    const ParameterInfo* info = findParameter(name);
    if (info && info->needsReset) {
        s.resetPending = true;
    } else if (info && info->group != "Surface") {
        s.solver->setConfig(s.solverConfig());
        s.bodies.setGravity(s.solverConfig().gravity);
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
PcisphSolver& Simulation::solver() {
    return *impl_->solver;
}
BoundaryModel& Simulation::boundary() {
    return impl_->boundary;
}
int Simulation::wallObject() const {
    return impl_->walls;
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
    const FluidState& st = impl_->solver->state();
    const Aabb box = impl_->scene.container.enlarged(0.5f * impl_->params.getf("particleRadius"));
    return tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, st.size(), 8192), size_t(0),
        [&](const tbb::blocked_range<size_t>& r, size_t n) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                n += box.contains(st.positions[i]) ? 0 : 1;
            return n;
        },
        std::plus<size_t>());
}

FrameSnapshotPtr Simulation::snapshot() const {
    Impl& s = *impl_; // the surface cache is rebuilt lazily
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
    // --- surface ---
    if (s.updateSurface()) {
        const SurfaceResult& r = s.surface.result();
        const SurfaceStats& t = r.stats;
        snap->lambda = r.lambda;
        snap->surfaceFlag = r.surfaceFlag;
        snap->surfaceMesh = r.mesh;
        snap->octreeNodes.reserve(r.leaves.size());
        for (const OctreeLeaf& leaf : r.leaves)
            snap->octreeNodes.push_back({leaf.min, leaf.edge, leaf.depth, NodeClass(uint8_t(leaf.cls))});
        const std::string method = s.params.choice("surfaceMethod");
        snap->stats.insert(snap->stats.end(),
                           {{"#FPsurface", double(t.surfaceParticles)},
                            {"#Cube(" + method + ")", double(t.cubes)},
                            {"#Cube(uniform)", double(t.cubesUniform)},
                            {"#Cube(narrow)", double(t.cubesNarrow)},
                            {"#Cube(sparse)", double(t.cubesSparse)},
                            {"#Triangles", double(t.triangles)},
                            {"Tode ms", t.tDetectMs + t.tOctreeMs + t.tDistanceMs},
                            {"Tmc ms", t.tMcMs},
                            {"surface MiB", double(t.peakBytes) / (1024.0 * 1024.0)}});
    }
    // --- surface end ---
    return snap;
}

// --- surface ---
const SurfaceResult* Simulation::surface() {
    return impl_->updateSurface() ? &impl_->surface.result() : nullptr;
}

void Simulation::reconstructNow() {
    impl_->surfaceDirty = true;
}

void Simulation::exportMesh(const std::string& path) {
    const SurfaceResult* r = surface();
    if (!r)
        throw std::runtime_error(impl_->surfaceError.empty() ? "no surface mesh: the surface is off (surfaceEnabled)"
                                                             : impl_->surfaceError);
    writeMesh(path, r->mesh);
}

std::string Simulation::surfaceWarning() const {
    if (!impl_->surfaceError.empty())
        return impl_->surfaceError;
    return surfaceSettingsFromParameters(impl_->params).warning();
}
// --- surface end ---

void Simulation::exportParticles(const std::string& path) const {
    const FluidState& st = impl_->solver->state();
    ParticleData d;
    d.positions = st.positions;
    d.velocities = st.velocities;
    d.scalars["density"] = st.densities;
    d.scalars["pressure"] = st.pressures;
    writeParticlesPly(path, d);
}

// ---- rigid bodies ------------------------------------------------------------------------

int Simulation::addBody(const BodyDescription& body) {
    Impl& s = *impl_;
    if (s.resetPending) s.build();
    const int id = s.bodies.add(body);
    s.bodies.sync(); // boundary object and pose now (snapshot, counts)
    return id;
}

int Simulation::addBody(const std::string& shape, const Vec3f& position, float size, float density) {
    if (!(size > 0.0f) || !std::isfinite(size)) throw std::invalid_argument("addBody: size must be > 0");
    if (!(density > 0.0f) || !std::isfinite(density)) throw std::invalid_argument("addBody: density must be > 0");
    if (!position.allFinite()) throw std::invalid_argument("addBody: position must be finite");
    BodyDescription d;
    d.position = position;
    d.density = density;
    if (shape == "box") {
        d.shape = BodyDescription::Shape::Box;
        d.size = Vec3f::Constant(size);
    } else if (shape == "sphere") {
        d.shape = BodyDescription::Shape::Sphere;
        d.radius = 0.5f * size;
    } else if (shape == "cylinder") {
        d.shape = BodyDescription::Shape::Cylinder;
        d.radius = 0.5f * size;
        d.height = size;
    } else if (shape == "armadillo") {
        d.shape = BodyDescription::Shape::Mesh;
        d.name = "armadillo";
        d.meshPath = resolveMeshPath("armadillo.obj", impl_->scene.sourcePath);
        FluidMesh probe;
        probe.meshPath = d.meshPath;
        d.meshScale = size / fluidMeshBounds(probe).extent().maxCoeff();
    } else {
        throw std::invalid_argument("addBody: unknown shape '" + shape + "' (box, sphere, cylinder, armadillo)");
    }
    return addBody(d);
}

void Simulation::removeBody(int id) {
    Impl& s = *impl_;
    if (!s.bodies.remove(id)) throw std::invalid_argument("removeBody: no body with id " + std::to_string(id));
    s.bodies.sync();
}

std::optional<std::pair<int, Vec3f>> Simulation::pickBody(const Vec3f& origin, const Vec3f& dir) const {
    return impl_->bodies.pick(origin, dir);
}

int Simulation::pickBody(const Vec3f& origin, const Vec3f& dir, Vec3f* bodySpaceHit) const {
    const auto hit = impl_->bodies.pick(origin, dir);
    if (!hit) return -1;
    if (bodySpaceHit) *bodySpaceHit = hit->second;
    return hit->first;
}

void Simulation::beginDrag(int id, const Vec3f& bodySpacePoint) { impl_->bodies.beginDrag(id, bodySpacePoint); }
void Simulation::setDragTarget(const Vec3f& worldPoint) { impl_->bodies.setDragTarget(worldPoint); }
void Simulation::endDrag() { impl_->bodies.endDrag(); }

void Simulation::stir(const Vec3f& origin, const Vec3f& dir, float radius, const Vec3f& velocity) {
    impl_->bodies.stir(origin, dir, radius, velocity);
}
void Simulation::stir(const Vec3f& origin, const Vec3f& dir, float radius, float strength) {
    impl_->bodies.stir(origin, dir, radius, strength);
}

std::vector<BodySnapshot> Simulation::bodies() const { return impl_->bodies.snapshot(); }
std::vector<BodyStats> Simulation::bodyStats() const { return impl_->bodies.stats(impl_->solver->state()); }
const RigidBodySystem& Simulation::rigidBodies() const { return impl_->bodies.system(); }
RigidBodySystem& Simulation::rigidBodies() { return impl_->bodies.system(); }
size_t Simulation::bodySampleCount() const { return impl_->bodies.sampleCount(); }

} // namespace octo
