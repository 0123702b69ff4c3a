// Rigid bodies in the Simulation: two-way momentum exchange (Akinci 2012), kinematic bodies,
// the drag API, adding/removing bodies during a run, picking, stirring, snapshots and scene
// errors.
#include "rigid/RigidBodySystem.h"
#include "scene/Scene.h"
#include "scene/SceneBodies.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "sim/SimulationBodies.h"
#include "sph/BoundaryModel.h"
#include "sph/FluidState.h"
#include "sph/SphSolver.h"
#include "sph/TimeStepController.h"

#include <QtTest>
#include <algorithm>
#include <array>
#include <cmath>

using namespace octo;

namespace {
const std::vector<std::string> kNoSurface = {"surfaceEnabled=false"};

Vec3d fluidMomentum(Simulation& sim) {
    const FluidState& f = sim.solver().state();
    Vec3d p = Vec3d::Zero();
    for (const Vec3f& v : f.velocities)
        p += v.cast<double>();
    return double(sim.solver().mass()) * p;
}

BodyDescription box(float edge, float relDensity, const Vec3f& at, const std::string& name = {}) {
    BodyDescription d;
    d.shape = BodyDescription::Shape::Box;
    d.size = Vec3f::Constant(edge);
    d.relativeDensity = relDensity;
    d.position = at;
    d.name = name;
    return d;
}
} // namespace

class TestRigidCoupling : public QObject {
    Q_OBJECT
private slots:
    void jetMomentumGoesIntoTheBody() {
        // Gravity off: a block of fluid at 2 m/s hits a free box. Walls are far, so the fluid's
        // momentum loss must reappear in the body (Newton's third law per boundary particle).
        const SceneDescription scene = parseSceneJson(R"({
            "name": "jet", "particleRadius": 0.0125, "gravity": [0, 0, 0],
            "container": {"min": [0, 0, 0], "max": [1.4, 1.0, 1.0]},
            "fluidBoxes": [{"min": [0.1, 0.4, 0.4], "max": [0.3, 0.6, 0.6], "velocity": [2, 0, 0]}],
            "bodies": [{"name": "target", "shape": "box", "size": 0.12, "relativeDensity": 1.0,
                        "position": [0.5, 0.5, 0.5]}]
        })",
                                                      "jet.json");
        Simulation sim(scene, kNoSurface);
        const RigidBody* body = sim.rigidBodies().bodies().front().get();
        const Vec3d pf0 = fluidMomentum(sim);
        const Vec3d pb0 = (body->mass() * body->linearVelocity()).cast<double>();
        while (sim.time() < 0.25)
            sim.advanceFrame(0.025);
        const Vec3d dpf = fluidMomentum(sim) - pf0;
        const Vec3d dpb = (body->mass() * body->linearVelocity()).cast<double>() - pb0;
        qInfo("fluid dP = (%.4f %.4f %.4f), body dP = (%.4f %.4f %.4f) N s, initial fluid P = %.4f", dpf.x(),
              dpf.y(), dpf.z(), dpb.x(), dpb.y(), dpb.z(), pf0.x());
        QVERIFY2(dpb.x() > 0.05 * pf0.x(), "the jet must transfer a good part of its momentum");
        const double imbalance = (dpb + dpf).norm() / dpb.norm();
        qInfo("momentum balance: |dP_body + dP_fluid| / |dP_body| = %.4f", imbalance);
        QVERIFY2(imbalance < 0.05, qPrintable(QString("imbalance %1").arg(imbalance)));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
    }

    void kinematicCylinderFollowsItsPath() {
        // r = 16 mm (5 700 particles, the cylinder 2.5 d0 across): the path, the body's speed and
        // the push do not depend on the fluid's resolution; at 12.5 mm (11 904 particles) the
        // test took 2.7 times as long.
        Simulation sim(SceneLibrary::load("cylinder"), {"particleRadius=0.016", "surfaceEnabled=false"});
        const size_t n0 = sim.fluidParticleCount();
        const auto& sys = sim.rigidBodies();
        QCOMPARE(int(sys.size()), 1);
        const RigidBody& cyl = *sys.bodies().front();
        QVERIFY(cyl.isKinematic());
        const BodyDescription desc = parseBodiesJson(sim.scene().bodiesJson, sim.scene().sourcePath).front();
        const KinematicPath path = kinematicPath(desc);
        float maxErr = 0.0f, maxFluidSpeed = 0.0f, maxBodySpeed = 0.0f;
        const double tEnd = desc.kinematic.startTime + 0.2;
        size_t contained = 0;
        while (sim.time() < tEnd) {
            contained += sim.step().contained;
            maxErr = std::max(maxErr, (cyl.position() - path(sim.time()).position).norm());
            maxBodySpeed = std::max(maxBodySpeed, cyl.linearVelocity().norm());
            QCOMPARE(sim.nonFiniteCount(), size_t(0));
        }
        for (const Vec3f& v : sim.solver().state().velocities)
            maxFluidSpeed = std::max(maxFluidSpeed, v.norm());
        qInfo("cylinder: max path error %.2e m, body speed %.2f m/s, max fluid speed %.2f m/s", maxErr,
              maxBodySpeed, maxFluidSpeed);
        QVERIFY(maxErr < 1e-5f);
        QVERIFY(std::abs(maxBodySpeed - 10.0f) < 0.05f);
        QCOMPARE(sim.fluidParticleCount(), n0);
        QVERIFY2(maxFluidSpeed > 2.0f, "the cylinder must push the fluid");
        QCOMPARE(sim.escapedCount(), size_t(0));
        // Walls and the moving body hold the fluid; the safety net may catch stray drops of the
        // spray that the cylinder throws against the lid at 10-17 m/s (density 300-500 kg/m^3,
        // no pressure to stop them): 1-3 of the 11 904 particles in 0.2 s at r = 12.5 mm. A leak
        // through a wall or the body would catch hundreds.
        qInfo("safety-net uses: %zu", contained);
        QVERIFY2(contained <= 10, qPrintable(QString("the safety net caught %1 particles").arg(contained)));
    }

    void dragReachesTargetAndReleaseFalls() {
        const SceneDescription scene = parseSceneJson(R"({
            "name": "drag", "particleRadius": 0.0125,
            "container": {"min": [0, 0, 0], "max": [1.0, 1.0, 0.4]},
            "fluidBoxes": [{"min": [0, 0, 0], "max": [1.0, 0.1, 0.4]}],
            "bodies": [{"name": "crate", "shape": "box", "size": 0.1, "relativeDensity": 0.6, "position": [0.2, 0.5, 0.2]}]
        })",
                                                      "drag.json");
        Simulation sim(scene, kNoSurface);
        const int id = sim.rigidBodies().bodies().front()->id();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sim.beginDrag(12345, Vec3f::Zero()));
        const Vec3f grab(0.0f, 0.05f, 0.0f); // top face centre, body space
        sim.beginDrag(id, grab);
        const RigidBody& b = *sim.rigidBodies().body(id);
        const Vec3f start = b.toWorld(grab);
        const Vec3f target = start + Vec3f(0.5f, 0.0f, 0.0f);
        sim.setDragTarget(target);
        const double t0 = sim.time();
        float overshoot = 0.0f;
        while (sim.time() < t0 + 1.0) {
            sim.advanceFrame(0.02);
            overshoot = std::max(overshoot, b.toWorld(grab).x() - target.x());
        }
        const float err = (b.toWorld(grab) - target).norm();
        qInfo("drag: error after 1 s %.4f m, overshoot %.4f m (of 0.5 m)", err, overshoot);
        QVERIFY2(err < 0.025f, qPrintable(QString("error %1 m").arg(err)));
        QVERIFY2(overshoot < 0.05f, qPrintable(QString("overshoot %1 m").arg(overshoot)));
        sim.endDrag();
        const float y0 = b.position().y();
        const double t1 = sim.time();
        while (sim.time() < t1 + 0.2)
            sim.advanceFrame(0.02);
        QVERIFY2(b.position().y() < y0 - 0.1f, "released body must fall");
    }

    void addRemovePickAndSnapshot() {
        Simulation sim(SceneLibrary::load("tank"), {"particleRadius=0.02", "surfaceEnabled=false"});
        const size_t fluid0 = sim.fluidParticleCount(), boundary0 = sim.boundaryParticleCount();
        sim.advanceFrame(0.05);
        const int id = sim.addBody(box(0.12f, 0.5f, Vec3f(0.3f, 0.5f, 0.3f), "spawned"));
        QVERIFY(sim.boundaryParticleCount() > boundary0);
        QCOMPARE(sim.boundaryParticleCount(), boundary0 + sim.bodySampleCount());
        // Picking from above hits the top face; the hit point is in body space.
        const auto hit = sim.pickBody(Vec3f(0.3f, 2.0f, 0.3f), Vec3f(0, -1, 0));
        QVERIFY(hit.has_value());
        QCOMPARE(hit->first, id);
        QVERIFY(std::abs(hit->second.y() - 0.06f) < 1e-4f);
        Vec3f p;
        QCOMPARE(sim.pickBody(Vec3f(0.3f, 2.0f, 0.3f), Vec3f(0, -1, 0), &p), id);
        QVERIFY(!sim.pickBody(Vec3f(0.3f, 2.0f, 0.3f), Vec3f(0, 1, 0)).has_value());
        // Snapshot: translation = centre of mass, mesh centred on it.
        const FrameSnapshotPtr snap = sim.snapshot();
        QCOMPARE(int(snap->bodies.size()), 1);
        const BodySnapshot& bs = snap->bodies.front();
        QCOMPARE(bs.id, id);
        QCOMPARE(bs.name, std::string("spawned"));
        QVERIFY(bs.mesh && !bs.mesh->vertices.empty());
        Vec3f c = Vec3f::Zero();
        for (const Vec3f& v : bs.mesh->vertices)
            c += v / float(bs.mesh->vertices.size());
        QVERIFY(c.norm() < 1e-5f);
        QVERIFY((bs.translation - Vec3f(0.3f, 0.5f, 0.3f)).norm() < 1e-5f);
        QCOMPARE(bs.density, 500.0f);
        const float y0 = sim.rigidBodies().body(id)->position().y();
        while (sim.time() < 0.3)
            sim.advanceFrame(0.05);
        QVERIFY(sim.rigidBodies().body(id)->position().y() < y0 - 0.05f); // it fell toward the water
        // Stirring changes fluid velocities near the ray.
        sim.stir(Vec3f(0.3f, 0.1f, -1.0f), Vec3f(0, 0, 1), 0.1f, Vec3f(1.0f, 0.0f, 0.0f));
        sim.step();
        float vx = 0.0f;
        for (const Vec3f& v : sim.solver().state().velocities)
            vx = std::max(vx, v.x());
        QVERIFY(vx > 0.3f);
        sim.removeBody(id);
        sim.step();
        QCOMPARE(sim.boundaryParticleCount(), boundary0);
        QCOMPARE(int(sim.bodies().size()), 0);
        QCOMPARE(sim.fluidParticleCount(), fluid0);
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sim.removeBody(id));
        // A body the fluid cannot resolve is refused with a message naming it.
        QVERIFY_THROWS_EXCEPTION(SceneError,
                                 sim.addBody(box(0.03f, 1.0f, Vec3f(0.3f, 0.5f, 0.3f), "pebble")));
        // Stats of the frame (run --stats-json).
        const int again = sim.addBody(box(0.12f, 2.0f, Vec3f(0.3f, 0.2f, 0.3f)));
        const auto stats = sim.bodyStats();
        QCOMPARE(int(stats.size()), 1);
        QCOMPARE(stats.front().id, again);
        QVERIFY(stats.front().submergedFraction > 0.0 && stats.front().submergedFraction <= 1.0);
    }

    void addedBodyDisplacesTheFluid() {
        // A box added into resting water takes the place of the fluid: the particles inside its
        // mesh or closer than r to its surface (where fluid rests against a face) are removed, as
        // at scene set-up, instead of being crushed out by the boundary pressure in the first
        // steps. Exactly those go, the others stay where they were, none twice.
        Simulation sim(SceneLibrary::load("tank"), {"particleRadius=0.02", "surfaceEnabled=false"});
        sim.advanceFrame(0.05);
        const std::vector<Vec3f> before = sim.solver().state().positions;
        const size_t fluid0 = before.size();
        const float edge = 0.2f, r = 0.02f;
        const Vec3f centre(0.3f, 0.25f, 0.3f); // the tank's water is 0.35 m deep
        // Tilted: its faces cut the lattice at every distance (an axis-aligned box is the easy case).
        BodyDescription tilted = box(edge, 1.0f, centre, "added");
        tilted.orientation = Quatf(Eigen::AngleAxisf(0.3f, Vec3f(1, 2, 3).normalized()));
        const int id = sim.addBody(tilted);
        const RigidBody& body = *sim.rigidBodies().body(id);
        auto key = [](const Vec3f& p) { return std::array<float, 3>{p.x(), p.y(), p.z()}; };
        std::vector<std::array<float, 3>> expectKept, kept;
        for (const Vec3f& x : before)
            if (!body.containsWorldPoint(x) && body.surfaceDistance(x, r) >= 0.999f * r)
                expectKept.push_back(key(x));
        for (const Vec3f& x : sim.solver().state().positions)
            kept.push_back(key(x));
        std::sort(expectKept.begin(), expectKept.end());
        std::sort(kept.begin(), kept.end());
        const size_t removed = fluid0 - sim.fluidParticleCount();
        const double expected = double(edge * edge * edge) / std::pow(0.04, 3.0); // volume / d0^3
        qInfo("added a %.2f m box: %zu of %zu fluid particles removed (box volume / d0^3 = %.0f)", edge,
              removed, fluid0, expected);
        QCOMPARE(kept.size(), expectKept.size());
        QVERIFY(kept == expectKept);
        QVERIFY(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
        QVERIFY2(removed > 0.8 * expected && removed < 2.5 * expected, qPrintable(QString::number(removed)));
        // Nothing erupts from the displaced water in the next frames.
        double peak = 0.0;
        while (sim.time() < 0.25) {
            sim.advanceFrame(0.025);
            peak = std::max(peak, sim.lastFrame().maxSpeed);
        }
        qInfo("peak fluid speed after adding: %.3f m/s", peak);
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        // Before the cull: 2 535 m/s. Measured 1.3-1.4 m/s with Akinci's wall pressure throughout;
        // 1.8 m/s now that the first body also switches the walls from the mirrored pressure back
        // to Akinci's (Pcisph_Solenthaler2009: the pool at r = 20 mm resettles by a few mm).
        QVERIFY2(peak < 2.0, qPrintable(QString("peak %1 m/s").arg(peak)));
        sim.removeBody(id);
    }

    void bodyAtItsDraftStartsCalm() {
        // Bodies of 0.5 rho0 placed at Archimedes' draft in a pool at rest: a box upright, a box
        // tilted by 3 degrees and a sphere (their faces cut the fluid lattice at every distance),
        // at dam-break-bodies' radius r = 8.5 mm. The draft is measured from the level the pool's
        // fluid fills once the bodies have displaced it, (N (2r)^3 + V_submerged) / area: whole
        // layers (SceneDescription::filledBox, 0.2417 m for the 0.25 m asked here) less the fluid
        // culled within r of the faces (SimulationBodies::fluidInside).
        // Bounds over the first 0.3 s, from what the cull leaves: no fluid is closer than the rest
        // contact r to a face, so nothing starts compressed; the first layer outside a face lies
        // within one spacing of that contact, a void < d0 that gravity closes. A body falling
        // freely across it reaches sqrt(2 g d0) = 0.58 m/s; fluid driven into it by the
        // hydrostatic head at the deepest body point D = 75 mm (the sphere's) reaches at most
        // sqrt(2 g D) = 1.21 m/s (Torricelli).
        const float r = 0.0085f, d0 = 2.0f * r, edge = 0.14f, radius = 0.075f;
        const double area = 0.9 * 0.35;
        const double submerged =
            0.5 * (2.0 * std::pow(double(edge), 3.0) + 4.0 / 3.0 * M_PI * std::pow(double(radius), 3.0));
        auto sceneAt = [&](float level) { // a 0.5 rho0 body floats with its centre at the level
            return parseSceneJson(QString(R"({"name": "draft", "particleRadius": 0.0085,
              "container": {"min": [0,0,0], "max": [0.9,0.5,0.35]},
              "fluidBoxes": [{"min": [0,0,0], "max": [0.9,0.25,0.35]}],
              "bodies": [{"name": "upright", "shape": "box", "size": 0.14, "relativeDensity": 0.5, "position": [0.16, %1, 0.175]},
                         {"name": "tilted", "shape": "box", "size": 0.14, "relativeDensity": 0.5, "position": [0.45, %1, 0.175],
                          "orientation": {"axis": [0, 0, 1], "angle": 3}},
                         {"name": "sphere", "shape": "sphere", "radius": 0.075, "relativeDensity": 0.5, "position": [0.74, %1, 0.175]}]})")
                                      .arg(double(level), 0, 'f', 6)
                                      .toStdString(),
                                  "draft.json");
        };
        const float filled = sceneAt(0.25f).filledBox(0, r).max.y();
        float level = filled;
        for (int pass = 0; pass < 2; ++pass) { // the culled count depends a little on the placement
            Simulation probe(sceneAt(level), kNoSurface);
            level =
                float((double(probe.fluidParticleCount()) * std::pow(double(d0), 3.0) + submerged) / area);
        }
        Simulation sim(sceneAt(level), kNoSurface);
        std::vector<float> y0, lowest, fastest;
        for (const auto& b : sim.rigidBodies().bodies())
            y0.push_back(b->position().y());
        lowest = y0;
        fastest.assign(y0.size(), 0.0f);
        double fluidPeak = 0.0;
        while (sim.time() < 0.3 - 1e-6) {
            sim.advanceFrame(0.005);
            fluidPeak = std::max(fluidPeak, sim.lastFrame().maxSpeed);
            size_t i = 0;
            for (const auto& b : sim.rigidBodies().bodies()) {
                lowest[i] = std::min(lowest[i], b->position().y());
                fastest[i] = std::max(fastest[i], b->linearVelocity().norm() + b->angularVelocity().norm() *
                                                                                   b->shape().boundingRadius);
                ++i;
            }
        }
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        const float torricelli = std::sqrt(2.0f * 9.81f * radius), freeFall = std::sqrt(2.0f * 9.81f * d0);
        qInfo("fill %.4f m, volume level with the bodies %.4f m; fluid peak %.3f m/s (bound %.2f)", filled,
              level, fluidPeak, torricelli);
        for (size_t i = 0; i < y0.size(); ++i)
            qInfo("  %s: sank %.1f mm at most, peak speed %.3f m/s (bound %.2f)",
                  sim.rigidBodies().bodies()[i]->name().c_str(), 1e3f * (y0[i] - lowest[i]), fastest[i],
                  freeFall);
        QVERIFY2(fluidPeak < torricelli, qPrintable(QString("fluid peak %1 m/s").arg(fluidPeak)));
        for (size_t i = 0; i < y0.size(); ++i) {
            QVERIFY2(fastest[i] < freeFall, qPrintable(QString("body peak %1 m/s").arg(fastest[i])));
            QVERIFY2(y0[i] - lowest[i] < d0, qPrintable(QString("sank %1 m").arg(y0[i] - lowest[i])));
        }
    }

    void bodyAccelerationBoundsTheStep() {
        // The force bound on each dynamic body's own acceleration from the last fluid load
        // (SimulationBodies::accelerationLimit): none before the first step, g for a body the
        // fluid does not touch, and |g + F/m| under a load F; a kinematic body does not count.
        const float r = 0.01f, d0 = 2.0f * r, cfl = 0.4f;
        const Vec3f g(0.0f, -9.81f, 0.0f);
        BoundaryModel boundary;
        boundary.setKernel(4.0f * r, 1000.0f);
        SimulationBodies bodies(boundary);
        bodies.configure(Aabb(Vec3f::Zero(), Vec3f::Ones()), g, r, 1000.0f);
        BodyDescription held = box(0.1f, 1.0f, Vec3f(0.7f, 0.5f, 0.5f), "held");
        held.kinematic.kind = KinematicMotion::Kind::Velocity;
        bodies.build({box(0.1f, 0.5f, Vec3f(0.3f, 0.5f, 0.5f), "light"), held}, 0.0);
        QVERIFY(std::isinf(bodies.accelerationLimit(cfl)));
        QCOMPARE(bodies.timeStepLimit(cfl, 1.0f), 1.0f); // at rest, no load yet: no bound
        bodies.afterStep(1e-4f);                         // no fluid force: free fall
        const float freeFall = TimeStepController::forceLimit(cfl, d0, 9.81f);
        QVERIFY2(std::abs(bodies.accelerationLimit(cfl) / freeFall - 1.0f) < 1e-3f,
                 qPrintable(QString::number(bodies.accelerationLimit(cfl))));
        QVERIFY(bodies.timeStepLimit(cfl, 1.0f) <= freeFall * 1.001f);
        // An upward load of 11 m g spread over the light box's samples: |a| = 10 g.
        // An upward load of 11 m g on the light box (the kinematic box's share is ignored): |a| = 10 g.
        const RigidBody& light = *bodies.system().bodies().front();
        const auto [first, count] = boundary.objectRange(bodies.coupling().objectOf(light.id()));
        boundary.update();
        boundary.clearForces();
        const Vec3f perSample = (-11.0f * light.mass() / float(count)) * g;
        for (uint32_t k = 0; k < boundary.positions().size(); ++k)
            boundary.addForceSorted(k, perSample);
        bodies.afterStep(1e-4f);
        const float loaded = TimeStepController::forceLimit(cfl, d0, 10.0f * 9.81f);
        QVERIFY2(std::abs(bodies.accelerationLimit(cfl) / loaded - 1.0f) < 1e-2f,
                 qPrintable(QString("%1 vs %2").arg(bodies.accelerationLimit(cfl)).arg(loaded)));
    }

    void badBodyInSceneIsReported() {
        const std::string text = R"({"name": "bad", "particleRadius": 0.02,
            "container": {"min": [0,0,0], "max": [1,1,1]}, "fluidBoxes": [{"min": [0,0,0], "max": [1,0.2,1]}],
            "bodies": [{"shape": "sphere", "radius": 0.1, "density": 0, "position": [0.5, 0.5, 0.5]}]})";
        try {
            Simulation sim(parseSceneJson(text, "bad.json"), kNoSurface);
            QFAIL("a zero density must be refused");
        } catch (const SceneError& e) {
            QVERIFY2(std::string(e.what()).find("bodies[0].density") != std::string::npos, e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestRigidCoupling)
#include "test_rigid_coupling.moc"
