#include "sim/Simulation.h"

#include "io/MeshWriter.h"
#include "io/ParticleIo.h"
#include "scene/Scene.h"
#include "scene/SceneBodies.h"
#include "scene/SceneLibrary.h"
#include "sim/SimulationBodies.h"
#include "sph/BoundaryModel.h"
#include "sph/PcisphSolver.h"
#include "surface/SurfaceReconstructor.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <chrono>
#include <functional>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace octo {

struct Simulation::Impl {
    SceneDescription scene;
    ParameterSet params;
    BoundaryModel boundary;
    SimulationBodies bodies{boundary};
    std::vector<BodyDescription> sceneBodies;
    std::unique_ptr<PcisphSolver> solver;
    int walls = -1;
    uint64_t steps = 0;
    size_t escapedTotal = 0; // escapes through the walls since the last reset
    StepStats last;
    FrameStats frame;
    bool resetPending = false;
    std::string status;
    float soundSpeed = 20.0f;
    // Energy check (Simulation::blowUpMessage).
    double energyRef = std::numeric_limits<double>::infinity(), energyTol = 0.0;
    double sourceWork = 0.0;      // work of the non-potential forces and kinematic bodies since the reset (J)
    float initialMaxSpeed = 0.0f; // fastest fluid particle of the scene's start (speed check)
    float stirSpeed = 0.0f;       // fastest fluid particle right after a stir since the reset (idem)
    float bodySpeed = 0.0f;       // fastest body point since the reset (idem)
    bool stirPending = false;
    std::string blowUpMsg;
    // Body positions at the start of the frame: frame-mean velocities for bodyStats().
    std::vector<std::pair<int, Vec3f>> frameStartPos, frameVelocity;
    double frameStartTime = 0.0;

    /// Kinetic and gravitational potential energy (J) of the fluid and the dynamic bodies.
    std::pair<double, double> energy() const {
        const FluidState& st = solver->state();
        const Vec3f g = solver->config().gravity;
        using KP = std::pair<double, double>;
        const KP sum = tbb::parallel_deterministic_reduce( // fixed summation order
            tbb::blocked_range<size_t>(0, st.size(), 8192), KP{0.0, 0.0},
            [&](const tbb::blocked_range<size_t>& r, KP a) {
                for (size_t i = r.begin(); i < r.end(); ++i) {
                    a.first += double(st.velocities[i].squaredNorm());
                    a.second -= double(g.dot(st.positions[i]));
                }
                return a;
            },
            [](KP a, const KP& b) {
                return KP{a.first + b.first, a.second + b.second};
            });
        const double m = solver->mass();
        double ke = 0.5 * m * sum.first, pe = m * sum.second;
        for (const auto& b : bodies.system().bodies())
            if (!b->isKinematic()) {
                ke += b->kineticEnergy();
                pe -= double(b->mass()) * double(g.dot(b->position()));
            }
        return {ke, pe};
    }

    /// The energy the blow-up check follows: kinetic + gravitational energy, plus the potential
    /// energy of the cohesion and adhesion (central pair forces), minus the work done so far by the
    /// forces without a potential (the tension's curvature term, vorticity confinement) and by the
    /// moving kinematic bodies, which are sources. Without that bookkeeping the check had to be off with them
    /// (droplets: 49 false alarms in 2 s, and a spin-up that gained 0.5 J went unflagged). The attraction's
    /// potential is the one at the step's start, a step behind the kinetic energy: a lag of one step's work.
    double balancedEnergy(double ke, double pe) const {
        return ke + pe + solver->attractionEnergy() - sourceWork;
    }

    /// Fastest speed the fluid may reach without a blow-up, given the fastest source: no source in a
    /// scene moves fluid faster than a fall through the whole container plus the fastest boundary
    /// particle (moving bodies) or the scene's initial flow; splashes and wall jets reach a few
    /// times that (built-in scenes at 2 s: at most 3.1x), an eruption tens to hundreds of times
    /// (cylinder instant start: 710 m/s).
    float speedLimit(float sourceSpeed) const {
        const Vec3f g(params.getf("gravityX"), params.getf("gravityY"), params.getf("gravityZ"));
        const float fall = std::sqrt(2.0f * g.norm() * scene.container.extent().maxCoeff());
        return 5.0f * (fall + sourceSpeed) + 1.0f;
    }

    /// True when something may add energy in this step that the balance cannot book: a drag or a
    /// stir. A moving kinematic body's work is booked (RigidCoupling::lastKinematicWork).
    bool driven() const { return stirPending || bodies.system().dragging(); }

    // --- surface (once per frame; issue 12) ---
    SurfaceStage stage;
    bool pipelined = false;
    bool surfaceDiagnostics = false; // Simulation::setSurfaceDiagnostics
    bool surfaceForced = true;       // rebuild from the current state at the next snapshot()/surface()
    uint64_t generation = 0;         // bumped by Surface edits, resets: older surfaces are never shown
    uint64_t builds = 0;
    bool lastStepEndedFrame = false;
    double framePhysicsMs = 0.0, lastFramePhysicsMs = 0.0; // solver time of the running / last frame
    std::string surfaceError;
    FrameSurfacePtr held; // keeps surface()'s result alive

    /// A copy of the frame's particles and the solver's densities for the stage. The stage detects
    /// the surface particles on the grid it builds for the octree anyway, with these densities (no
    /// second grid, no extra density pass). Lambda on the solver's cached neighbour lists
    /// (SolverSurfaceDetection, equal within 1e-4) is slower since the stage's pass runs in 8-float
    /// lanes (`bench live`: 17.0 vs 14.5 ms at 96 k particles, 5.2 vs 4.3 ms at 30 k) and needed the
    /// lists refreshed at the frame's end on the physics thread (44 / 15 ms, reused by the next step).
    SurfaceJob makeJob() {
        const auto t0 = std::chrono::steady_clock::now();
        SurfaceJob job;
        job.settings = surfaceSettingsFromParameters(params);
        // What only the octree overlay and the #Cube comparison read: ~3 ms (baseline cell counts)
        // + ~1-2 ms (275 k leaves kept and copied) of a ~45 ms surface at 30 k particles.
        job.settings.storeLeaves = surfaceDiagnostics;
        job.settings.countBaselines = surfaceDiagnostics;
        const FluidState& st = solver->state();
        job.time = solver->time();
        job.step = steps;
        job.generation = generation;
        job.positions = st.positions;
        job.densities = st.densities;
        job.velocities = st.velocities;
        job.ids = st.ids;
        job.copyMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return job;
    }

    /// The frame just ended: start its surface (serial: now; pipelined: beside the next frame).
    void startFrameSurface() {
        lastFramePhysicsMs = framePhysicsMs;
        framePhysicsMs = 0.0;
        if (!params.getb("surfaceEnabled") || surfaceForced)
            return; // forced: snapshot()/surface() rebuild from the current state anyway
        ++builds;
        if (pipelined) {
            stage.submit(makeJob());
        } else {
            stage.build(makeJob());
        }
    }

    /// The latest finished surface of the current settings (nullptr: none yet / off).
    FrameSurfacePtr current() const {
        FrameSurfacePtr f = stage.latest();
        return f && f->generation == generation ? f : nullptr;
    }

    /// Applies a forced rebuild (edit, reset, first frame) now, on this thread.
    void applyForced() {
        if (!surfaceForced || !params.getb("surfaceEnabled"))
            return;
        surfaceForced = false;
        stage.cancelQueued();
        ++builds;
        stage.build(makeJob());
    }

    void invalidateSurface() {
        ++generation;
        surfaceForced = true;
        stage.cancelQueued();
    }
    // --- surface end ---

    PcisphSolver::Config solverConfig() const {
        PcisphSolver::Config c = PcisphSolver::configFrom(params);
        c.soundSpeed = soundSpeed;
        c.domain = scene.container;
        // Centres may overlap the wall plane by up to r/2 (the wall gap is as compressible as
        // the fluid, eta); beyond that a particle has leaked and the safety net puts it back.
        c.containment = scene.container.enlarged(0.5f * c.particleRadius);
        c.escape = scene.container.enlarged(2.0f * c.particleRadius * float(params.geti("boundaryLayers")));
        return c;
    }

    void build() {
        const float r = params.getf("particleRadius");
        scene.checkBudget(r, params.geti("boundaryLayers")); // fluid + walls vs memory, before sampling
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
        solver->setBoundaryMotion([this](float dt) { bodies.coupling().pushKinematicVelocities(dt); });
        const int layers = params.geti("boundaryLayers");
        walls = boundary.addObject(sampleBoxWalls(scene.container, 2.0f * r, layers), true,
                                   planarWallPsiScale(4.0f * r, 2.0f * r, layers));
        boundary.setWall(walls); // the pressure extrapolated from the fluid (PcisphSolver)
        // Rigid bodies: boundary objects after the walls; fluid inside them is removed.
        bodies.configure(scene.container, solverConfig().gravity, r, params.getf("restDensity"));
        bodies.build(sceneBodies, 0.0);
        bodies.cullFluid(x, v);
        solver->setParticles(std::move(x), std::move(v));
        // Energy-check tolerance: 1 % of M |g| H, or of M v0^2 / 2 without gravity (or of the
        // attraction's potential energy, see step()).
        const double fluidMass = double(solver->mass()) * double(solver->particleCount());
        energyTol = 0.01 * fluidMass *
                    std::max({double(g) * double(scene.container.extent().maxCoeff()),
                              0.5 * double(vmax) * vmax, 1e-3});
        energyRef = std::numeric_limits<double>::infinity();
        sourceWork = 0.0;
        initialMaxSpeed = vmax;
        stirSpeed = 0.0f;
        bodySpeed = 0.0f;
        stirPending = false;
        blowUpMsg.clear();
        frameStartPos.clear();
        frameVelocity.clear();
        steps = 0;
        escapedTotal = 0;
        last = StepStats{};
        frame = FrameStats{};
        status.clear();
        resetPending = false;
        lastStepEndedFrame = false;
        invalidateSurface(); // --- surface ---
    }

    /// One step toward `target` (a frame end): the remaining steps of the frame are evened out so
    /// the frame ends exactly on its time.
    const StepStats& stepToward(double target) {
        const double remaining = target - solver->time();
        const double next = std::min(solver->nextTimeStep(),
                                     bodies.timeStepLimit(params.getf("cflFactor"), solver->nextTimeStep()));
        const double count = std::max(1.0, std::ceil(remaining / next - 1e-6));
        return step(float(remaining / count));
    }

    const StepStats& step(float maxDt) {
        if (resetPending)
            build();
        // CFL on the bodies too (docs/ALGORITHMS.md §2.1 with max(|v_fluid|, |v_body|)).
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
        const bool drive = driven();
        bodies.afterStep(r.dt);
        sourceWork += bodies.coupling().lastKinematicWork();
        // The stir tool accelerates without a cap: the speed it gave the fluid is a source.
        if (stirPending)
            stirSpeed = std::max(stirSpeed, solver->maxSpeed());
        stirPending = false;
        ++steps;
        lastStepEndedFrame = false;
        framePhysicsMs += r.msTotal;
        const auto [ke, pe] = energy();
        sourceWork += solver->sourceWork();
        const double e = balancedEnergy(ke, pe);
        energyRef = drive ? e : std::min(energyRef, e);
        // Plus 5 % of the attraction's potential energy: fluid that tension pulls off a wall that
        // acts as air gains up to 3 % of |U| that the balance does not book (a 0.1 m pool with
        // gamma = 2 in a 0.2 m box, r = 10 mm: 0.17 J of 5.6 J in 30 ms, and as much without
        // gravity; a free drop: 0.08 %). Without it that pool raised a false alarm.
        const double tolerance = energyTol + 0.05 * std::abs(solver->attractionEnergy());
        const bool energyGrew = !drive && e > energyRef + tolerance;
        // The speed check also holds while bodies move or the stir tool pushes (their speeds are
        // sources) and with the non-conservative forces. The attraction is a source too: the
        // speed its whole potential energy would give the fluid (a cube of water in zero gravity
        // collapsing into a drop: corners at 1.0 m/s against a limit of 1 m/s without it).
        const double fluidMass = double(solver->mass()) * double(solver->particleCount());
        const float cohesionSpeed =
            fluidMass > 0.0 ? float(std::sqrt(2.0 * std::abs(solver->attractionEnergy()) / fluidMass)) : 0.0f;
        // A body's speed stays a source after it stops: the fluid it threw keeps flying (the
        // cylinder at r = 5 mm: 29 m/s spray flagged in the frame the cylinder stopped, when the
        // limit fell from 78 to 28 m/s).
        bodySpeed = std::max(bodySpeed, bodies.coupling().maxBodySpeed());
        const float sources = std::max({initialMaxSpeed, stirSpeed, cohesionSpeed, bodySpeed});
        const float limit = speedLimit(sources);
        const bool tooFast = solver->maxSpeed() > limit;
        last.blowUp = energyGrew || tooFast;
        if (last.blowUp && blowUpMsg.empty()) {
            std::ostringstream m;
            m << "blow-up at t = " << solver->time() << " s: ";
            if (energyGrew)
                m << "the energy grew by " << (e - energyRef) << " J without a source (tolerance "
                  << tolerance << " J); max speed " << solver->maxSpeed() << " m/s";
            else
                m << "the fluid reached " << solver->maxSpeed() << " m/s, more than any source can give it ("
                  << limit << " m/s: 5x the free fall through the container plus the fastest body or stir)";
            m << ": reset, or lower timeStepMax / cflFactor";
            blowUpMsg = m.str();
        }
        last.maxSpeed = solver->maxSpeed();
        last.kineticEnergy = ke;
        last.energyGrowth = e - energyRef;
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
};

Simulation::Simulation(const SceneDescription& scene, const std::vector<std::string>& overrides)
    : impl_(std::make_unique<Impl>()) {
    scene.validate();
    Impl& s = *impl_;
    s.scene = scene;
    s.sceneBodies =
        parseBodiesJson(scene.bodiesJson, scene.sourcePath.empty() ? scene.name : scene.sourcePath);
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

namespace {
/// The one frame-end tolerance (s): a time this close below a frame end has reached it. Two
/// tolerances (1e-6 frames here, 1e-7 s in the loops) disagreed: a time 2e-8..1e-7 s short of
/// an end was neither in the next frame nor short enough to step, and with timeStepMin =
/// timeStepMax = 5 ms time froze at 0.75 s (75 of 120 frames with 0 steps; issue 30).
constexpr double kFrameEndTolerance = 1e-7;
/// End of the frame containing time t (frames of length d); a time on a boundary starts the next.
double nextFrameEnd(double t, double d) {
    return (std::floor((t + kFrameEndTolerance) / d) + 1.0) * d;
}
} // namespace

int Simulation::advanceFrame(double frameDuration) {
    Impl& s = *impl_;
    if (!(frameDuration > 0.0))
        throw std::invalid_argument("advanceFrame: frame duration must be > 0");
    if (s.resetPending)
        s.build();
    const double target = nextFrameEnd(s.solver->time(), frameDuration);
    FrameStats f;
    double dtSum = 0.0, itSum = 0.0, msSum = 0.0;
    s.frameStartTime = s.solver->time();
    s.bodies.resetForceMeans();
    s.frameStartPos.clear();
    for (const auto& b : s.bodies.system().bodies())
        s.frameStartPos.emplace_back(b->id(), b->position());
    while (s.solver->time() < target - kFrameEndTolerance) {
        s.stepToward(target);
        dtSum += s.last.dt;
        itSum += s.last.iterations;
        msSum += s.last.physicsMs;
        f.maxDensityError = std::max(f.maxDensityError, s.last.maxDensityError);
        f.converged = f.converged && s.last.converged;
        f.contained += s.last.contained;
        f.escaped += s.last.escaped;
        f.maxSpeed = std::max(f.maxSpeed, s.last.maxSpeed);
        f.blowUp = f.blowUp || s.last.blowUp;
        f.energyGrowth = std::max(f.energyGrowth, s.last.energyGrowth);
        ++f.steps;
    }
    f.kineticEnergy = s.last.kineticEnergy;
    // Body velocity reported for the frame: its mean over the frame (displacement / duration),
    // free of the step-to-step jitter of the contact and coupling impulses.
    s.frameVelocity.clear();
    const double span = s.solver->time() - s.frameStartTime;
    if (span > 0.0)
        for (const auto& b : s.bodies.system().bodies())
            for (const auto& [id, x0] : s.frameStartPos)
                if (id == b->id())
                    s.frameVelocity.emplace_back(id, ((b->position() - x0) / float(span)).eval());
    if (f.steps > 0) {
        f.meanDt = dtSum / f.steps;
        f.meanIterations = itSum / f.steps;
        f.meanPhysicsMs = msSum / f.steps;
    }
    s.frame = f;
    s.lastStepEndedFrame = true;
    s.startFrameSurface();
    return f.steps;
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
        s.startFrameSurface();
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
    return impl_->frame;
}

void Simulation::setParameter(const std::string& name, double value) {
    Impl& s = *impl_;
    s.params.setConsistent(name, value);
    s.energyRef = std::numeric_limits<double>::infinity(); // e.g. gravity changed: new reference
    const ParameterInfo* info = findParameter(name);
    if (info && info->group == "Surface")
        s.invalidateSurface(); // rebuilt at once with the new settings; the old mesh is never shown again
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
const std::string& Simulation::blowUpMessage() const {
    return impl_->blowUpMsg;
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
    return impl_->escapedTotal;
}

FrameSnapshotPtr Simulation::snapshot() const {
    Impl& s = *impl_; // the surface cache is rebuilt lazily
    s.applyForced();  // first: it re-sorts the particles (neighbour-list refresh)
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
    // --- surface: the latest finished frame's (flags mapped to the current order by particle id) ---
    if (const FrameSurfacePtr fs = s.params.getb("surfaceEnabled") ? s.current() : nullptr) {
        const SurfaceResult& r = fs->result;
        const SurfaceStats& t = r.stats;
        s.surfaceError = fs->error;
        snap->surfaceTime = fs->time;
        snap->surfaceStep = fs->step;
        snap->surfaceSerial = fs->serial;
        if (!fs->flagById.empty()) {
            snap->lambda.resize(st.size());
            snap->surfaceFlag.resize(st.size());
            const uint32_t* ids = st.ids.data();
            const size_t known = fs->flagById.size();
            for (size_t i = 0; i < st.size(); ++i) {
                const uint32_t id = ids[i];
                snap->surfaceFlag[i] = id < known ? fs->flagById[id] : 0;
                snap->lambda[i] = id < known ? fs->lambdaById[id] : 1.0f;
            }
        }
        snap->surfaceMesh = r.mesh;
        snap->octreeNodes.reserve(r.leaves.size());
        for (const OctreeLeaf& leaf : r.leaves)
            snap->octreeNodes.push_back({leaf.min, leaf.edge, leaf.depth, NodeClass(uint8_t(leaf.cls))});
        const std::string method = s.params.choice("surfaceMethod");
        snap->stats.insert(snap->stats.end(), {{"surface time", fs->time},
                                               {"#FPsurface", double(t.surfaceParticles)},
                                               {"#Cube(" + method + ")", double(t.cubes)},
                                               {"#Cube(uniform)", double(t.cubesUniform)}});
        if (fs->baselinesCounted) // with the diagnostics only (the method's own count is always there)
            snap->stats.insert(snap->stats.end(), {{"#Cube(narrow)", double(t.cubesNarrow)},
                                                   {"#Cube(sparse)", double(t.cubesSparse)}});
        snap->stats.insert(snap->stats.end(),
                           {{"#Triangles", double(t.triangles)},
                            {"Tode ms", fs->odeMs()},
                            {"Tdetect ms", t.tDetectMs},
                            {"Tmc ms", t.tMcMs},
                            {"Tsurface ms", fs->totalMs()},
                            {"Tps frame ms", s.lastFramePhysicsMs},
                            {"surface share %",
                             s.lastFramePhysicsMs > 0.0 ? 100.0 * fs->totalMs() / s.lastFramePhysicsMs : 0.0},
                            {"surface MiB", double(t.peakBytes) / (1024.0 * 1024.0)}});
    }
    // --- surface end ---
    return snap;
}

// --- surface ---
const SurfaceResult* Simulation::surface() {
    Impl& s = *impl_;
    if (!s.params.getb("surfaceEnabled"))
        return nullptr;
    s.applyForced();
    FrameSurfacePtr f = s.current();
    if (!f || f->step != s.steps) {
        s.stage.wait(); // a pipelined build of this very state may be in progress
        f = s.current();
    }
    if (!f || f->step != s.steps) {
        s.stage.cancelQueued();
        ++s.builds;
        f = s.stage.build(s.makeJob());
    }
    s.held = f;
    s.surfaceError = f->error;
    return f->error.empty() ? &f->result : nullptr;
}

FrameSurfacePtr Simulation::frameSurface() const {
    return impl_->params.getb("surfaceEnabled") ? impl_->current() : nullptr;
}

void Simulation::setSurfaceDiagnostics(bool on) {
    impl_->surfaceDiagnostics = on;
}

void Simulation::setSurfacePipelined(bool pipelined) {
    impl_->pipelined = pipelined;
    if (!pipelined)
        impl_->stage.wait();
}

bool Simulation::surfacePipelined() const {
    return impl_->pipelined;
}

uint64_t Simulation::surfaceBuilds() const {
    return impl_->builds;
}

void Simulation::waitForSurface() {
    impl_->stage.wait();
}

void Simulation::reconstructNow() {
    impl_->invalidateSurface();
}

void Simulation::exportMesh(const std::string& path) {
    const SurfaceResult* r = surface();
    if (!r)
        throw std::runtime_error(impl_->surfaceError.empty()
                                     ? "no surface mesh: the surface is off (surfaceEnabled)"
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
    if (s.resetPending)
        s.build();
    const int id = s.bodies.add(body);
    s.bodies.sync();
    // Fluid inside the new body (or closer than d0 to its samples) would be crushed out of
    // it by the boundary pressure in the first steps: remove it, as the scene set-up does.
    const size_t before = s.solver->particleCount();
    s.solver->removeParticles(s.bodies.fluidInside(s.solver->state().positions, id));
    if (s.solver->particleCount() != before)
        s.invalidateSurface();
    s.energyRef = std::numeric_limits<double>::infinity(); // the body brings its own energy // boundary
                                                           // object and pose now (snapshot, counts)
    return id;
}

int Simulation::addBody(const std::string& shape, const Vec3f& position, float size, float density) {
    if (!(size > 0.0f) || !std::isfinite(size))
        throw std::invalid_argument("addBody: size must be > 0");
    if (!(density > 0.0f) || !std::isfinite(density))
        throw std::invalid_argument("addBody: density must be > 0");
    if (!position.allFinite())
        throw std::invalid_argument("addBody: position must be finite");
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
        throw std::invalid_argument("addBody: unknown shape '" + shape +
                                    "' (box, sphere, cylinder, armadillo)");
    }
    return addBody(d);
}

void Simulation::removeBody(int id) {
    Impl& s = *impl_;
    if (!s.bodies.remove(id))
        throw std::invalid_argument("removeBody: no body with id " + std::to_string(id));
    s.bodies.sync();
    s.energyRef = std::numeric_limits<double>::infinity();
}

std::optional<std::pair<int, Vec3f>> Simulation::pickBody(const Vec3f& origin, const Vec3f& dir) const {
    return impl_->bodies.pick(origin, dir);
}

int Simulation::pickBody(const Vec3f& origin, const Vec3f& dir, Vec3f* bodySpaceHit) const {
    const auto hit = impl_->bodies.pick(origin, dir);
    if (!hit)
        return -1;
    if (bodySpaceHit)
        *bodySpaceHit = hit->second;
    return hit->first;
}

void Simulation::beginDrag(int id, const Vec3f& bodySpacePoint) {
    impl_->bodies.beginDrag(id, bodySpacePoint);
}
void Simulation::setDragTarget(const Vec3f& worldPoint) {
    impl_->bodies.setDragTarget(worldPoint);
}
void Simulation::endDrag() {
    impl_->bodies.endDrag();
}

void Simulation::stir(const Vec3f& origin, const Vec3f& dir, float radius, const Vec3f& velocity) {
    impl_->stirPending = true;
    impl_->bodies.stir(origin, dir, radius, velocity);
}
void Simulation::stir(const Vec3f& origin, const Vec3f& dir, float radius, float strength) {
    impl_->stirPending = true;
    impl_->bodies.stir(origin, dir, radius, strength);
}

std::vector<BodySnapshot> Simulation::bodies() const {
    return impl_->bodies.snapshot();
}
std::vector<BodyStats> Simulation::bodyStats() const {
    std::vector<BodyStats> out = impl_->bodies.stats(impl_->solver->state());
    for (BodyStats& b : out) // the last frame's mean velocity (advanceFrame), else the current one
        for (const auto& [id, v] : impl_->frameVelocity)
            if (id == b.id)
                b.velocity = v;
    return out;
}
const RigidBodySystem& Simulation::rigidBodies() const {
    return impl_->bodies.system();
}
RigidBodySystem& Simulation::rigidBodies() {
    return impl_->bodies.system();
}
size_t Simulation::bodySampleCount() const {
    return impl_->bodies.sampleCount();
}

} // namespace octo
