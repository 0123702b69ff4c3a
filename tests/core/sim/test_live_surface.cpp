// The live loop's surface (issue 12): Marrone's lambda of the live path equals the standalone
// detection on a dam-break frame, the surface is rebuilt exactly once per
// simulated frame (serial and pipelined), and after a Surface parameter edit no snapshot ever
// shows a surface of the old settings.
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"
#include "surface/SurfaceReconstructor.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace octo;

namespace {
std::unique_ptr<Simulation> smallDamBreak(std::vector<std::string> overrides = {}) {
    SceneDescription scene = SceneLibrary::load("dam-break");
    scene.particleRadius = 0.02f; // ~3.5 k particles: quick frames
    return std::make_unique<Simulation>(scene, overrides);
}

/// Every flag of the snapshot is lambda <= lambdaMin of the given value.
bool flagsFollow(const FrameSnapshot& f, double lambdaMin) {
    if (f.surfaceFlag.size() != f.positions.size() || f.lambda.size() != f.positions.size())
        return false;
    for (size_t i = 0; i < f.positions.size(); ++i)
        if ((f.lambda[i] <= float(lambdaMin)) != (f.surfaceFlag[i] != 0))
            return false;
    return true;
}
} // namespace

class TestLiveSurface : public QObject {
    Q_OBJECT
private slots:
    void liveLambdaEqualsStandaloneDetection() {
        auto sim = smallDamBreak({"surfaceEnabled=0"});
        for (int f = 0; f < 15; ++f) // 0.25 s: the column has collapsed onto the floor and walls
            sim->advanceFrame(1.0 / 60.0);
        // The integrated path (Simulation::surface) gives the standalone detection's lambda in the
        // solver's current particle order.
        sim->setParameter("surfaceEnabled", 1.0);
        const SurfaceResult* res = sim->surface();
        QVERIFY(res);
        const FluidState& st = sim->solver().state();
        SurfaceSettings settings = surfaceSettingsFromParameters(sim->parameters());
        settings.computeMesh = false;
        SurfaceReconstructor standalone;
        standalone.reconstruct(st.positions, st.densities, settings);
        const std::vector<float>& ref = standalone.result().lambda;
        QCOMPARE(res->lambda.size(), ref.size());
        double maxDiff = 0.0;
        size_t surface = 0, nearWall = 0;
        const Aabb box = sim->domain();
        const float r = sim->parameters().getf("particleRadius");
        for (size_t i = 0; i < ref.size(); ++i) {
            maxDiff = std::max(maxDiff, double(std::abs(res->lambda[i] - ref[i])));
            surface += res->lambda[i] <= settings.lambdaMin ? 1 : 0;
            nearWall += (st.positions[i].y() - box.min.y() < 2.0f * r) ? 1 : 0;
        }
        qInfo("%zu particles, %zu surface, %zu on the floor, max |dlambda| = %.3g", ref.size(), surface,
              nearWall, maxDiff);
        QVERIFY2(maxDiff <= 1e-4, qPrintable(QString("max |dlambda| = %1").arg(maxDiff)));
        QCOMPARE(res->stats.surfaceParticles, standalone.result().stats.surfaceParticles);
        // The frame exercises both sides: free surface and fluid against the walls (which the
        // detection does not count as neighbours, so floor particles have lambda < 1 too).
        QVERIFY(surface > 100 && surface < ref.size() * 4 / 5);
        QVERIFY(nearWall > 100);
    }

    void rebuiltOncePerFrame_data() {
        QTest::addColumn<bool>("pipelined");
        QTest::newRow("serial") << false;
        QTest::newRow("pipelined") << true;
    }
    void rebuiltOncePerFrame() {
        QFETCH(bool, pipelined);
        auto sim = smallDamBreak();
        sim->setSurfacePipelined(pipelined);
        const double frame = sim->frameDuration();
        QCOMPARE(frame, 1.0 / 60.0);
        QVERIFY(sim->snapshot()->surfaceTime == 0.0); // the initial state's surface
        const uint64_t builds0 = sim->surfaceBuilds();
        uint64_t serial = sim->snapshot()->surfaceSerial, serialChanges = 0;
        int frames = 0, steps = 0;
        while (frames < 4) {
            sim->frameStep();
            ++steps;
            const auto snap = sim->snapshot(); // a publish after every step builds nothing
            QVERIFY(snap->surfaceTime >= 0.0 && snap->surfaceTime <= snap->time + 1e-9);
            serialChanges += snap->surfaceSerial != serial ? 1 : 0;
            serial = snap->surfaceSerial;
            if (sim->frameEnded()) {
                ++frames;
                QVERIFY2(std::abs(sim->time() - frames * frame) < 1e-6, "frames end exactly on 1/fps");
                if (pipelined)
                    sim->waitForSurface();
                // The frame's surface is the one shown from now on.
                const auto shown = sim->snapshot();
                QVERIFY(std::abs(shown->surfaceTime - sim->time()) < 1e-9);
                // With the frame's particle velocities interpolated at its vertices: weighted means,
                // so never faster than the fastest particle, and the falling water moves.
                const TriangleMesh& mesh = shown->surfaceMesh;
                QVERIFY(!mesh.empty());
                QCOMPARE(mesh.velocities.size(), mesh.vertices.size());
                float fastest = 0.0f, fastestVertex = 0.0f;
                for (const Vec3f& v : shown->velocities)
                    fastest = std::max(fastest, v.norm());
                for (const Vec3f& v : mesh.velocities)
                    fastestVertex = std::max(fastestVertex, v.norm());
                QVERIFY(fastestVertex > 0.0f);
                QVERIFY(fastestVertex <= fastest * (1.0f + 1e-5f));
            }
            QCOMPARE(sim->surfaceBuilds() - builds0, uint64_t(frames));
        }
        QVERIFY(steps > 2 * frames); // several steps per frame, one surface per frame
        QVERIFY(serialChanges >= uint64_t(frames) - 1 &&
                serialChanges <= uint64_t(frames)); // new mesh per frame only
        QVERIFY(flagsFollow(*sim->snapshot(), sim->parameters().get("lambdaMin")));
    }

    void noStaleSurfaceAfterEdit_data() { rebuiltOncePerFrame_data(); }
    void noStaleSurfaceAfterEdit() {
        QFETCH(bool, pipelined);
        auto sim = smallDamBreak();
        sim->setSurfacePipelined(pipelined);
        for (int f = 0; f < 3; ++f)
            sim->advanceFrame(sim->frameDuration());
        const double before = sim->snapshot()->stat("#FPsurface");
        // A frame surface of the old settings is (perhaps still) being built while we edit.
        sim->advanceFrame(sim->frameDuration());
        sim->setParameter("lambdaMin", 0.3);
        const auto snap = sim->snapshot(); // rebuilt at once with the new lambdaMin
        QVERIFY(flagsFollow(*snap, 0.3));
        QVERIFY(snap->stat("#FPsurface") < before);
        QVERIFY(std::abs(snap->surfaceTime - sim->time()) < 1e-9);
        sim->waitForSurface(); // the old job finishes: it must not replace the new surface
        QVERIFY(flagsFollow(*sim->snapshot(), 0.3));
        QCOMPARE(sim->snapshot()->stat("#FPsurface"), snap->stat("#FPsurface"));
        // Later frames keep the new setting: run until two more frames have ended, so their
        // surfaces were built after the edit (a surface that stopped rebuilding would still show
        // the edit's flags and pass the check below), and compare with the edit's count.
        const uint64_t buildsAtEdit = sim->surfaceBuilds();
        for (int frames = 0; frames < 2;) {
            sim->frameStep();
            frames += sim->frameEnded() ? 1 : 0;
        }
        sim->waitForSurface();
        const auto later = sim->snapshot();
        QCOMPARE(sim->surfaceBuilds() - buildsAtEdit, uint64_t(2));
        QVERIFY(std::abs(later->surfaceTime - sim->time()) < 1e-9); // this frame's surface
        QVERIFY(later->surfaceTime > snap->surfaceTime);
        QVERIFY(flagsFollow(*later, 0.3));
        // The count follows the new threshold, not the old one: a tenth of the count at 0.75 two
        // frames earlier would still be far more than lambda <= 0.3 flags (the flow barely
        // changes the count in two frames).
        qInfo("#FPsurface: %.0f at lambdaMin 0.75, %.0f right after the edit to 0.3, %.0f two frames later",
              before, snap->stat("#FPsurface"), later->stat("#FPsurface"));
        QVERIFY(later->stat("#FPsurface") < 0.1 * before); // measured 11 against 898
        sim->setParameter("surfaceEnabled", 0.0);
        QVERIFY(sim->snapshot()->surfaceMesh.empty());
        QVERIFY(sim->snapshot()->surfaceTime < 0.0);
    }
};

QTEST_MAIN(TestLiveSurface)
#include "test_live_surface.moc"
