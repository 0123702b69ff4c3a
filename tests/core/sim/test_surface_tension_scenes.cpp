// The new forces at their scene defaults do not blow up (issue 11): every built-in scene, at a
// coarse resolution so the test stays short, runs for a while with surface tension, adhesion and
// vorticity confinement as its JSON sets them (nan 0, contained 0, nothing escapes). Scenes
// without the forces in their JSON run with the table defaults (0: the paper's PCISPH). And a
// settled dam break with surface tension comes to rest with wallCohesion = 1.
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <algorithm>

using namespace octo;

class TestSurfaceTensionScenes : public QObject {
    Q_OBJECT
private slots:
    void builtInScenesRunWithTheirDefaults() {
        const auto names = SceneLibrary::names();
        QVERIFY(std::find(names.begin(), names.end(), "droplets") != names.end());
        for (const std::string& name : names) {
            SceneDescription scene = SceneLibrary::load(name);
            scene.particleRadius = std::max(scene.particleRadius, scene.radiusForParticleCount(4000));
            Simulation sim(scene, {"surfaceEnabled=false"});
            const double seconds = std::min(double(scene.endTime), name == "cylinder" ? 0.45 : 0.4);
            size_t contained = 0;
            while (sim.time() < seconds) {
                sim.step();
                contained += sim.solver().lastStep().contained;
            }
            const auto& p = sim.parameters();
            qInfo("%-16s %6zu particles, %.2f s: gamma %.2f beta %.2f eps %.2f, nan %zu, contained %zu, "
                  "escaped %zu",
                  name.c_str(), sim.fluidParticleCount(), sim.time(), p.get("surfaceTension"),
                  p.get("adhesion"), p.get("vorticityConfinement"), sim.nonFiniteCount(), contained,
                  sim.escapedCount());
            QCOMPARE(sim.nonFiniteCount(), size_t(0));
            // The cylinder jumps from rest to 10 m/s at 0.25 s (an open item of issue 9: at the
            // default radius that start erupts later on); with the wall-filling lattice one or two of
            // its splashed particles reach the safety net in some runs. None passes the walls.
            QVERIFY2(contained <= (name == "cylinder" ? size_t(4) : size_t(0)),
                     qPrintable(QString("%1: contained %2").arg(name.c_str()).arg(contained)));
            QCOMPARE(sim.escapedCount(), size_t(0));
        }
    }

    void wallCohesionLetsTheEdgesSettle() {
        // A 0.2 m dam in a 0.6 x 0.4 x 0.2 m box (r = 8.5 mm, gamma 0.5 like the dam-break scenes).
        // With the paper's cohesion (walls act as air) particles in the floor-wall edges rattle in
        // and out for as long as it runs: the max speed over 5-6 s is 0.53 m/s with wallCohesion =
        // 0 (still 0.45 m/s at 10 s), 0.11 m/s with wallCohesion = 1.
        SceneDescription scene;
        scene.name = "settling-dam";
        scene.particleRadius = 0.0085f;
        scene.container = Aabb(Vec3f::Zero(), Vec3f(0.6f, 0.4f, 0.2f));
        scene.fluidBoxes.push_back({Aabb(Vec3f::Zero(), Vec3f(0.2f, 0.3f, 0.2f)), Vec3f::Zero()});
        Simulation sim(scene, {"surfaceEnabled=false", "surfaceTension=0.5", "wallCohesion=1"});
        double lateMax = 0.0;
        while (sim.time() < 6.0 - 1e-9) {
            sim.advanceFrame(1.0 / 60.0);
            if (sim.time() > 5.0)
                lateMax = std::max(lateMax, sim.lastFrame().maxSpeed);
        }
        qInfo("settled dam with wall cohesion: max speed over 5-6 s %.3f m/s", lateMax);
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        QVERIFY2(lateMax < 0.25, qPrintable(QString("max speed %1 m/s").arg(lateMax)));
    }
};

QTEST_GUILESS_MAIN(TestSurfaceTensionScenes)
#include "test_surface_tension_scenes.moc"
