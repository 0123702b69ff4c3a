// Issue 9: statistics that show a blow-up (maxSpeed, kineticEnergy, blowUp), lattices that keep
// their size (round(extent / spacing) layers), and a body velocity report without step jitter.
#include "scene/Scene.h"
#include "scene/SceneBodies.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>

using namespace octo;

namespace {

SceneDescription pool(float r, Vec3f container, float depth) {
    SceneDescription scene;
    scene.name = "stats-test";
    scene.particleRadius = r;
    scene.container = Aabb(Vec3f::Zero(), container);
    scene.fluidBoxes.push_back(
        {Aabb(Vec3f::Zero(), Vec3f(container.x(), depth, container.z())), Vec3f::Zero()});
    return scene;
}

} // namespace

class TestFrameStats : public QObject {
    Q_OBJECT
private slots:
    void latticeRoundsToNearestLayer() {
        // 0.55 m at spacing 18.33 mm is 30.005 spacings: 30 layers (floor gave 29, 0.532 m).
        const float r = 0.0183333f / 2.0f;
        SceneDescription scene = pool(r, Vec3f(1.0f, 1.0f, 1.0f), 0.55f);
        scene.fluidBoxes[0].box = Aabb(Vec3f::Zero(), Vec3f(0.55f, 0.55f, 0.55f));
        std::vector<Vec3f> x, v;
        scene.sampleFluid(r, x, v);
        QCOMPARE(x.size(), size_t(30 * 30 * 30));
        QCOMPARE(scene.estimateParticleCount(r), size_t(30 * 30 * 30));
        float top = 0.0f;
        for (const Vec3f& p : x)
            top = std::max(top, p.y());
        QVERIFY(std::abs(top + r - 0.55f) < 1e-4f); // the lattice spans the box
        // 29.6 spacings round up to 30 ...
        scene.fluidBoxes[0].box = Aabb(Vec3f::Zero(), Vec3f(0.55f, 29.6f * 2.0f * r, 0.55f));
        scene.sampleFluid(r, x, v);
        QCOMPARE(x.size(), size_t(30 * 30 * 30));
        // ... 29.4 round down to 29 ...
        scene.fluidBoxes[0].box = Aabb(Vec3f::Zero(), Vec3f(0.55f, 29.4f * 2.0f * r, 0.55f));
        scene.sampleFluid(r, x, v);
        QCOMPARE(x.size(), size_t(30 * 29 * 30));
        // ... but never past the container wall: a box flush with the far wall only (29.6 spacings
        // away from its min side) keeps 29.
        scene.container = Aabb(Vec3f(-0.1f, 0.0f, 0.0f), Vec3f(29.6f * 2.0f * r, 1.0f, 1.0f));
        scene.fluidBoxes[0].box = Aabb(Vec3f::Zero(), Vec3f(29.6f * 2.0f * r, 0.55f, 0.55f));
        scene.sampleFluid(r, x, v);
        QCOMPARE(x.size(), size_t(29 * 30 * 30));
        for (const Vec3f& p : x)
            QVERIFY(p.x() <= scene.container.max.x() - r + 1e-5f);
    }

    void latticeFillsWallToWallAxes() {
        // A tank 0.15 m wide at r = 4.25 mm: 17.6 spacings. Along x and z the box spans the
        // container, so the layers fill it (outer layers half a spacing from each wall: no gap for
        // the column to slump into); the cell volume stays (2r)^3 by giving the stretch back in y.
        const float r = 0.00425f, d0 = 2.0f * r;
        SceneDescription scene = pool(r, Vec3f(0.15f, 0.6f, 0.15f), 0.35f);
        std::vector<Vec3f> x, v;
        scene.sampleFluid(r, x, v);
        Vec3f lo = Vec3f::Constant(1e9f), hi = Vec3f::Constant(-1e9f);
        for (const Vec3f& p : x) {
            lo = lo.cwiseMin(p);
            hi = hi.cwiseMax(p);
        }
        const int n = 18; // round(0.15 / 0.0085) = round(17.65)
        const float s = 0.15f / float(n), sy = d0 * d0 * d0 / (s * s);
        const int ny = int(std::lround(0.35 / sy));
        QCOMPARE(x.size(), size_t(n * ny * n));
        QCOMPARE(scene.estimateParticleCount(r), x.size());
        for (int a : {0, 2}) {
            QVERIFY(std::abs(lo[a] - 0.5f * s) < 1e-5f);
            QVERIFY(std::abs(hi[a] - (0.15f - 0.5f * s)) < 1e-5f);
        }
        QVERIFY(std::abs(lo.y() - 0.5f * sy) < 1e-5f);             // on the floor
        QVERIFY(std::abs(hi.y() + 0.5f * sy - 0.35f) < 0.5f * sy); // the depth within half a layer
        // Rest density: the lattice's cell volume is (2r)^3, so the fluid starts at rho0.
        QVERIFY(std::abs(s * s * sy / (d0 * d0 * d0) - 1.0f) < 1e-5f);
    }

    void latticeInAFullClosedTank() {
        // Water filling a closed tank: 0.35 m at r = 12 mm is 14.6 spacings. Stretched along all
        // three axes the lattice had 15 layers of 23.3 mm (9 % above rho0 in a box it cannot leave)
        // and erupted at ~1 000 m/s in the first frame. The axis along gravity keeps whole cells.
        const float r = 0.012f, d0 = 2.0f * r;
        SceneDescription scene = pool(r, Vec3f(0.2f, 0.35f, 0.2f), 0.35f);
        std::vector<Vec3f> x, v;
        scene.sampleFluid(r, x, v);
        const double cellVolume = double(scene.container.extent().prod()) / double(x.size());
        QVERIFY2(cellVolume >= double(d0 * d0 * d0) * (1.0 - 1e-4), qPrintable(QString::number(cellVolume)));
        float top = 0.0f;
        for (const Vec3f& p : x)
            top = std::max(top, p.y());
        QVERIFY(top < 0.35f - 0.5f * d0 + 1e-5f); // no layer inside the lid
        Simulation sim(scene, {"surfaceEnabled=false"});
        double peak = 0.0;
        for (int f = 0; f < 6; ++f) {
            sim.advanceFrame(1.0 / 60.0);
            peak = std::max(peak, double(sim.lastFrame().maxSpeed));
            QVERIFY(!sim.lastFrame().blowUp);
        }
        // Measured 0.56 m/s: the start transient of every lattice column (an open one: 0.37).
        QVERIFY2(peak < 1.0, qPrintable(QString("peak speed %1 m/s").arg(peak)));
    }

    void fineRadiusAllowed() {
        // Laboratory scale: r = 0.2 mm is accepted (limit 0.1 mm); below it is refused.
        SceneDescription scene = pool(0.0002f, Vec3f(0.004f, 0.004f, 0.004f), 0.002f);
        Simulation sim(scene, {"surfaceEnabled=false"});
        QCOMPARE(sim.fluidParticleCount(), size_t(10 * 5 * 10));
        QVERIFY_THROWS_EXCEPTION(std::exception, Simulation(scene, {"particleRadius=0.00005"}));
    }

    void energyStatsAndBlowUpFlag() {
        SceneDescription scene = pool(0.01f, Vec3f(0.2f, 0.3f, 0.2f), 0.1f);
        Simulation sim(scene, {"surfaceEnabled=false"});
        const double mass = sim.solver().mass() * double(sim.fluidParticleCount());
        for (int f = 0; f < 6; ++f) {
            sim.advanceFrame(1.0 / 60.0);
            const FrameStats& fr = sim.lastFrame();
            QVERIFY(!fr.blowUp);
            QVERIFY(fr.maxSpeed >= 0.0 && fr.maxSpeed < 0.5);
            // kinetic energy = sum m v^2 / 2 of the state at the end of the frame
            double ke = 0.0, vmax = 0.0;
            for (const Vec3f& v : sim.solver().state().velocities) {
                ke += 0.5 * sim.solver().mass() * v.squaredNorm();
                vmax = std::max(vmax, double(v.norm()));
            }
            QVERIFY(std::abs(fr.kineticEnergy - ke) <= 1e-6 + 1e-3 * ke);
            QVERIFY(fr.maxSpeed >= vmax - 1e-6);
        }
        QVERIFY(sim.blowUpMessage().empty());
        // Energy from nowhere: kick every particle upward by 1 m/s between steps.
        for (Vec3f& v : sim.solver().state().velocities)
            v.y() += 1.0f;
        sim.advanceFrame(1.0 / 60.0);
        const FrameStats& fr = sim.lastFrame();
        qInfo("kick: kinetic energy %.4f J (0.5 M v^2 = %.4f J), maxSpeed %.3f m/s, blowUp %d",
              fr.kineticEnergy, 0.5 * mass, fr.maxSpeed, int(fr.blowUp));
        QVERIFY(fr.blowUp);
        QVERIFY(fr.maxSpeed > 0.8);
        QVERIFY(!sim.blowUpMessage().empty());
        sim.reset();
        QVERIFY(sim.blowUpMessage().empty());
    }

    void firstStepExplosionIsFlagged() {
        // Issue 30: the energy reference is the state before the first step. The dam break at
        // r = 15 mm with timeStepMax = 1e-5 s and timeStepMin = 1e-6 s erupts in its first 1 us
        // step (~3.8 kJ, 28 m/s, under the 33 m/s speed limit); the reference used to be taken
        // after that step, so nothing was flagged.
        auto sim = Simulation::fromSceneName("dam-break", {"particleRadius=0.015", "surfaceEnabled=false",
                                                           "timeStepMax=1e-5", "timeStepMin=1e-6"});
        sim->step();
        const StepStats& s = sim->lastStep();
        qInfo("first step: %s", sim->blowUpMessage().c_str());
        QVERIFY(s.blowUp);
        QVERIFY(s.energyGrowth > 100.0);
        QVERIFY2(sim->blowUpMessage().find("blow-up at t = 1e-06 s: the energy grew by") != std::string::npos,
                 sim->blowUpMessage().c_str());
        // A reset takes a new reference before its own first step: the same eruption again.
        sim->reset();
        QVERIFY(sim->blowUpMessage().empty());
        sim->step();
        QVERIFY(sim->lastStep().blowUp);
        // The same scene at its usual step bounds starts clean: the reference before the first
        // step is no false alarm (the start lattice's settling stays within the tolerance).
        auto calm = Simulation::fromSceneName("dam-break", {"particleRadius=0.015", "surfaceEnabled=false"});
        for (int f = 0; f < 3; ++f) {
            calm->advanceFrame(1.0 / 60.0);
            QVERIFY2(!calm->lastFrame().blowUp, calm->blowUpMessage().c_str());
        }
    }

    void blowUpChecksHoldWithSurfaceTension() {
        // With surface tension and adhesion the energy check counts the attraction's potential
        // energy and books the work of the curvature term as a source (it was off with them: the
        // droplets scene raised 49 false alarms in 2 s, and the spin-up fixed in ad4d988 gained
        // 0.5 J unflagged; with this bookkeeping the old code's free drop flags at 1.8 s). A
        // particle faster than any source (5x the free fall through the container + the
        // cohesion's speed + 1 m/s) is flagged too.
        SceneDescription scene = pool(0.01f, Vec3f(0.2f, 0.3f, 0.2f), 0.1f);
        Simulation sim(scene, {"surfaceEnabled=false", "surfaceTension=2", "adhesion=2"});
        for (int f = 0; f < 4; ++f) {
            sim.advanceFrame(1.0 / 60.0);
            QVERIFY(!sim.lastFrame().blowUp);
        }
        QVERIFY(sim.solver().attractionEnergy() < 0.0); // cohesion and adhesion bind
        sim.solver().state().velocities[0] = Vec3f(0.0f, 60.0f, 0.0f);
        sim.advanceFrame(1.0 / 60.0);
        qInfo("%s", sim.blowUpMessage().c_str());
        QVERIFY(sim.lastFrame().blowUp);
        QVERIFY(!sim.blowUpMessage().empty());
    }

    void energyCheckWithTensionInZeroGravity() {
        // A 0.12 m cube of water (r = 6 mm, 1000 particles) in zero gravity with gamma = 2 rounds
        // into a drop: the curvature term's work and the cohesion's potential close the balance
        // (measured growth above the minimum: 1.3 mJ, tolerance 5 % of |U| = 84 mJ), and the
        // corners, which collapse at 1.0 m/s, stay below the speed limit because the cohesion's
        // energy counts as a source. A uniform 0.5 m/s kick (216 mJ, far below the speed limit)
        // is energy from nowhere.
        SceneDescription scene;
        scene.name = "zero-g-drop";
        scene.particleRadius = 0.006f;
        scene.gravity = Vec3f::Zero();
        scene.container = Aabb(Vec3f::Zero(), Vec3f::Constant(0.6f));
        scene.fluidBoxes.push_back({Aabb(Vec3f::Constant(0.24f), Vec3f::Constant(0.36f)), Vec3f::Zero()});
        Simulation sim(scene, {"surfaceEnabled=false", "surfaceTension=2", "viscosity=0.02"});
        double growth = 0.0;
        for (int f = 0; f < 60; ++f) {
            sim.advanceFrame(1.0 / 60.0);
            QVERIFY2(!sim.lastFrame().blowUp, sim.blowUpMessage().c_str());
            growth = std::max(growth, sim.lastFrame().energyGrowth);
        }
        const double tolerance = 0.05 * std::abs(sim.solver().attractionEnergy());
        qInfo("drop: attraction energy %.4f J, largest growth %.5f J (tolerance %.4f J)",
              sim.solver().attractionEnergy(), growth, tolerance);
        QVERIFY(growth < 0.1 * tolerance);
        for (Vec3f& v : sim.solver().state().velocities)
            v.x() += 0.5f;
        sim.advanceFrame(1.0 / 60.0);
        qInfo("kick: %s", sim.blowUpMessage().c_str());
        QVERIFY(sim.lastFrame().blowUp);
        QVERIFY(sim.blowUpMessage().find("energy grew") != std::string::npos);
    }

    void stirredFluidIsNotABlowUp() {
        // The stir tool has no speed cap, so the speed it delivers is a source: fluid stirred past
        // the no-source limit (13.1 m/s here) does not trip the speed check, during or after the
        // stir (the energy check may still catch what the splash does at the walls); a particle
        // far beyond what the stir gave still trips it.
        SceneDescription scene = pool(0.01f, Vec3f(0.2f, 0.3f, 0.2f), 0.1f);
        Simulation sim(scene, {"surfaceEnabled=false"});
        sim.advanceFrame(1.0 / 60.0);
        const auto speedFlag = [&] {
            return sim.blowUpMessage().find("more than any source") != std::string::npos;
        };
        float stirred = 0.0f;
        for (int k = 0; k < 5; ++k) {
            sim.stir(Vec3f(0.1f, 0.05f, -1.0f), Vec3f(0, 0, 1), 0.08f, Vec3f(0.0f, 20.0f, 0.0f));
            stirred = std::max(stirred, float(sim.step().maxSpeed));
            QVERIFY2(!speedFlag(), sim.blowUpMessage().c_str());
        }
        for (int f = 0; f < 3; ++f) {
            sim.advanceFrame(1.0 / 60.0);
            QVERIFY2(!speedFlag(), sim.blowUpMessage().c_str());
        }
        qInfo("stirred up to %.1f m/s; flag: %s", stirred,
              sim.blowUpMessage().empty() ? "none" : sim.blowUpMessage().c_str());
        QVERIFY2(stirred > 13.1f, "the stir must beat the no-source limit for this test to mean anything");
        sim.reset();
        sim.advanceFrame(1.0 / 60.0);
        sim.stir(Vec3f(0.1f, 0.05f, -1.0f), Vec3f(0, 0, 1), 0.08f, Vec3f(0.0f, 20.0f, 0.0f));
        sim.step();
        sim.solver().state().velocities[0] = Vec3f(0.0f, 10.0f * stirred, 0.0f);
        sim.step();
        QVERIFY(sim.lastStep().blowUp);
    }

    void bodySpeedStaysASourceAfterTheBodyStops() {
        // A kinematic cylinder crosses a pool at 5 m/s and stops; fluid it threw keeps flying. The
        // speed limit keeps the body's speed as a source (43 m/s here, 18 m/s without): the
        // cylinder scene at r = 5 mm was flagged for its 31 m/s spray in the frame the cylinder
        // stopped. A particle at 25 m/s after the stop is not a speed blow-up (its 2.5 J stay within
        // the energy tolerance, 3.2 J, so the energy check does not speak first); at 60 m/s it is.
        SceneDescription scene = pool(0.01f, Vec3f(0.6f, 0.4f, 0.3f), 0.3f);
        scene.bodiesJson = R"([{"shape": "cylinder", "radius": 0.03, "height": 0.3, "kinematic":
            {"path": [[0.1, 0.15, 0.15], [0.5, 0.15, 0.15]], "speed": 5.0, "acceleration": 400.0}}])";
        Simulation sim(scene, {"surfaceEnabled=false"});
        const auto speedFlag = [&] {
            return sim.blowUpMessage().find("more than any source") != std::string::npos;
        };
        while (sim.time() < 0.2)
            sim.advanceFrame(1.0 / 60.0);
        QVERIFY2(!speedFlag(), sim.blowUpMessage().c_str());
        QVERIFY(sim.bodyStats()[0].velocity.norm() < 1e-3); // stopped at the path's end
        // The spray: the highest particle, sent up (a particle inside the pool would hit its
        // neighbours at 25 m/s, and that collision's energy error is the energy check's business).
        auto& state = sim.solver().state();
        const auto highest = [&] {
            return size_t(std::max_element(state.positions.begin(), state.positions.end(),
                                           [](const Vec3f& a, const Vec3f& b) { return a.y() < b.y(); }) -
                          state.positions.begin());
        };
        state.velocities[highest()] = Vec3f(0.0f, 25.0f, 0.0f);
        sim.step();
        QVERIFY2(!sim.lastStep().blowUp, sim.blowUpMessage().c_str());
        qInfo("a 25 m/s particle after the stop: energy growth %.3f J", sim.lastStep().energyGrowth);
        state.velocities[highest()] = Vec3f(0.0f, 60.0f, 0.0f);
        sim.step();
        qInfo("%s", sim.blowUpMessage().c_str());
        QVERIFY(sim.lastStep().blowUp);
        QVERIFY(speedFlag() || sim.blowUpMessage().find("energy grew") != std::string::npos);
    }

    void energyCheckHoldsWhileAKinematicBodyMoves() {
        // The kinematic cylinder's work on the fluid, -(F.dx + T.dtheta) per step from the fluid's
        // load on it and its displacement, is booked, so the energy check stays on while it moves (it was
        // off: the cylinder scene's 0.16 s crossing was unchecked). `cylinder` at r = 10 mm grows at most 3.5
        // J (tolerance 27.6 J). A uniform 0.5 m/s kick in mid-crossing (6.8 J, far below the speed limit) is
        // energy from nowhere.
        SceneDescription scene = pool(0.01f, Vec3f(0.6f, 0.4f, 0.3f), 0.3f);
        scene.bodiesJson = R"([{"shape": "cylinder", "radius": 0.03, "height": 0.3, "kinematic":
            {"path": [[0.1, 0.15, 0.15], [0.5, 0.15, 0.15]], "speed": 2.0, "acceleration": 100.0}}])";
        Simulation sim(scene, {"surfaceEnabled=false"});
        double growth = 0.0;
        while (sim.time() < 0.1) {
            sim.advanceFrame(1.0 / 60.0);
            QVERIFY2(!sim.lastFrame().blowUp, sim.blowUpMessage().c_str());
            growth = std::max(growth, sim.lastFrame().energyGrowth);
        }
        qInfo("cylinder at %.2f m/s: largest growth %.4f J", sim.bodyStats()[0].velocity.norm(), growth);
        QVERIFY(sim.bodyStats()[0].velocity.norm() > 1.5); // still moving
        QVERIFY(growth < 1.0);
        for (Vec3f& v : sim.solver().state().velocities)
            v.x() += 0.5f;
        sim.step();
        qInfo("kick: %s", sim.blowUpMessage().c_str());
        QVERIFY(sim.lastStep().blowUp);
        QVERIFY(sim.blowUpMessage().find("energy grew") != std::string::npos);
    }

    void aKinematicBodysStartIsSeenByTheFluid() {
        // A paddle starts at 400 m/s^2 (the cylinder scene's start) towards 5 m/s. The solver
        // places the body's samples at x + dt v; with the velocity at the step's start (0) the
        // fluid did not see the 3.5 mm the paddle then moved, the next step's pressure turned the
        // overlap into 862 m/s and the energy check fired. With the path's mean velocity over the
        // step (and over a restarted, shorter one) the fluid is pushed ahead of the paddle:
        // 19.9 m/s at the corners' jets, energy growth 0.07 J (tolerance 1.08 J).
        SceneDescription scene = pool(0.01f, Vec3f(0.6f, 0.3f, 0.2f), 0.16f);
        scene.bodiesJson = R"([{"shape": "box", "size": [0.04, 0.3, 0.12], "kinematic":
            {"path": [[0.1, 0.15, 0.1], [0.5, 0.15, 0.1]], "speed": 5.0, "acceleration": 400.0,
             "startTime": 0.1}}])";
        Simulation sim(scene, {"surfaceEnabled=false"});
        float fastest = 0.0f;
        double growth = 0.0;
        while (sim.time() < 0.16) {
            sim.advanceFrame(1.0 / 60.0);
            QVERIFY2(!sim.lastFrame().blowUp, sim.blowUpMessage().c_str());
            QVERIFY(sim.lastFrame().converged);
            fastest = std::max(fastest, float(sim.lastFrame().maxSpeed));
            growth = std::max(growth, sim.lastFrame().energyGrowth);
        }
        qInfo("paddle start: fastest fluid %.2f m/s, largest energy growth %.3f J", fastest, growth);
        QVERIFY(sim.bodyStats()[0].velocity.norm() > 4.9f); // at speed, still crossing
        QVERIFY2(fastest < 40.0f, qPrintable(QString::number(fastest)));
        QVERIFY(growth < 0.2);
    }

    void aSqueezedRegionRelaxesWithoutEruption_data() {
        // The two smaller squeezes are corrected by the ordinary step, by pressure, within its
        // guards; the largest makes the first attempt fail them, and the compression is moved back
        // onto rho <= rho0 by positions (DensityProjection_Macklin2013) before the step is redone
        // with all its guards. Measured peaks 0.170, 0.539, 0.157 m/s (before the projection, with
        // the relaxation rule it replaced: 0.17, 0.54, 1.13 m/s); the last bound is 3x it.
        QTest::addColumn<float>("factor");
        QTest::addColumn<float>("fastestBound");
        QTest::newRow("x 0.985: +5 %") << 0.985f << 0.5f;
        QTest::newRow("x 0.95: +17 %") << 0.95f << 1.5f;
        QTest::newRow("x 0.90: +37 %") << 0.9f << 0.5f;
    }
    void aSqueezedRegionRelaxesWithoutEruption() {
        // A 10 cm cube of a resting column squeezed toward its centre before a step: the
        // compression is in the state, not made by the step, so the restarts' shorter steps
        // started with the same error and only corrected it faster (speed ~ e d0 / dt). They
        // went down to timeStepMin and threw the cube apart at 748 m/s (squeezed by 10 %);
        // test_density_projection checks the projection that now takes it.
        QFETCH(float, factor);
        QFETCH(float, fastestBound);
        SceneDescription scene = pool(0.01f, Vec3f(0.2f, 0.5f, 0.2f), 0.3f);
        Simulation sim(scene, {"surfaceEnabled=false"});
        for (int f = 0; f < 12; ++f)
            sim.advanceFrame(1.0 / 60.0);
        const Vec3f centre(0.1f, 0.15f, 0.1f);
        int squeezed = 0;
        for (Vec3f& x : sim.solver().state().positions)
            if ((x - centre).cwiseAbs().maxCoeff() < 0.05f) {
                x = centre + factor * (x - centre);
                ++squeezed;
            }
        QVERIFY(squeezed >= 64); // 80 = 5 x 4 x 4 at the column's lattice
        float fastest = 0.0f, smallestDt = 1.0f;
        for (int k = 0; k < 40; ++k) {
            const StepStats& s = sim.step();
            fastest = std::max(fastest, float(s.maxSpeed));
            smallestDt = std::min(smallestDt, float(s.dt));
        }
        qInfo("squeezed cube (x %.3f): fastest %.3f m/s, smallest dt %.2e s, after 40 steps %.4f m/s",
              double(factor), fastest, smallestDt, sim.lastStep().maxSpeed);
        QVERIFY2(fastest < fastestBound, qPrintable(QString::number(fastest)));
        QVERIFY(smallestDt > 1e-4f);
        QVERIFY(sim.lastStep().maxSpeed < 0.5);
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
    }

    void restingBodyReportsNoJitter() {
        // A 2 rho0 box resting on the floor next to a pool: the reported (frame-mean) velocity
        // stays below 1 cm/s although the contact solver's per-step velocity jitters.
        SceneDescription scene = pool(0.01f, Vec3f(0.4f, 0.3f, 0.4f), 0.06f);
        scene.fluidBoxes[0].box.max.x() = 0.12f;
        Simulation sim(scene, {"surfaceEnabled=false"});
        BodyDescription box;
        box.shape = BodyDescription::Shape::Box;
        box.size = Vec3f::Constant(0.1f);
        box.relativeDensity = 2.0f;
        box.position = Vec3f(0.3f, 0.05f + 0.001f, 0.2f);
        const int id = sim.addBody(box);
        double worst = 0.0, worstStep = 0.0;
        for (int f = 0; f < 36; ++f) { // 0.6 s: the first 0.25 s settle
            sim.advanceFrame(1.0 / 60.0);
            const std::vector<BodyStats> stats = sim.bodyStats();
            QCOMPARE(stats.size(), size_t(1));
            QCOMPARE(stats[0].id, id);
            if (f >= 15) {
                worst = std::max(worst, double(stats[0].velocity.norm()));
                worstStep = std::max(worstStep, double(sim.bodies()[0].velocity.norm()));
            }
        }
        const float y = sim.bodyStats()[0].position.y();
        qInfo("resting box: centre y %.4f m, worst reported speed %.5f m/s (instantaneous at frame ends %.5f "
              "m/s)",
              y, worst, worstStep);
        QVERIFY(std::abs(y - 0.05f) < 0.01f); // it rests on the floor
        QVERIFY2(worst < 0.01, qPrintable(QString::number(worst)));
    }
};

QTEST_APPLESS_MAIN(TestFrameStats)
#include "test_frame_stats.moc"
