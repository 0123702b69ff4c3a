// Scene JSON: the built-in scenes load; malformed or incomplete files give errors naming the
// line:column or the field; parameter range errors name the parameter and its range.
#include "scene/JsonFields.h"
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"

#include <QtTest>

using namespace octo;

class TestSceneJson : public QObject {
    Q_OBJECT
private:
    static QString errorOf(const std::string& text) {
        try {
            parseSceneJson(text, "test.json");
        } catch (const SceneError& e) {
            return QString::fromStdString(e.what());
        }
        return {};
    }
    static const char* valid() {
        return R"({
  "name": "t", "particleRadius": 0.01,
  "container": {"min": [0,0,0], "max": [1,1,1]},
  "fluidBoxes": [{"min": [0,0,0], "max": [0.2,0.3,0.4]}],
  "fluidSpheres": [{"center": [0.5,0.7,0.5], "radius": 0.1, "velocity": [0,-1,0]}],
  "gravity": [0,-9.81,0], "endTime": 2, "fps": 30,
  "parameters": {"viscosity": 0.02, "surfaceMethod": "uniform", "surfaceEnabled": false},
  "bodies": [{"shape": "box", "size": 0.1, "relativeDensity": 0.5, "position": [0.5, 0.3, 0.5]}]
})";
    }

private slots:
    void builtInScenesLoad() {
        for (const char* name : {"dam-break", "tank", "drop"}) {
            const SceneDescription s = SceneLibrary::load(name);
            QCOMPARE(QString::fromStdString(s.name), QString(name));
            QVERIFY(!s.container.empty());
            QVERIFY(s.fluidVolume() > 0.0);
            const size_t n = s.estimateParticleCount(s.particleRadius);
            QVERIFY2(n > 20000 && n < 32000, qPrintable(QString("%1: %2 particles").arg(name).arg(n)));
        }
        QVERIFY(!SceneLibrary::load("drop").fluidSpheres.empty());
    }

    void unknownSceneListsKnownOnes() {
        try {
            SceneLibrary::load("no-such-scene");
            QFAIL("expected SceneError");
        } catch (const SceneError& e) {
            QVERIFY(QString(e.what()).contains("dam-break"));
        }
    }

    void validSceneParses() {
        const SceneDescription s = parseSceneJson(valid(), "test.json");
        QCOMPARE(s.fluidBoxes.size(), size_t(1));
        QCOMPARE(s.fluidSpheres.size(), size_t(1));
        QCOMPARE(s.fluidSpheres[0].velocity.y(), -1.0f);
        QCOMPARE(s.fps, 30.0);
        QCOMPARE(s.parameters.size(), size_t(3));
        QVERIFY(QString::fromStdString(s.bodiesJson).contains("box"));
        // Bodies are checked at load: a bad body is a scene error naming its field.
        std::string bad = valid();
        bad.replace(bad.find("\"size\": 0.1, "), 13, "");
        const QString e = errorOf(bad);
        QVERIFY2(e.contains("test.json") && e.contains("bodies[0].size"), qPrintable(e));
        std::vector<Vec3f> x, v;
        s.sampleFluid(0.01f, x, v);
        QCOMPARE(x.size(), v.size());
        QVERIFY(x.size() >= 10 * 15 * 20);
        const float r = s.radiusForParticleCount(50000);
        s.sampleFluid(r, x, v);
        QVERIFY2(x.size() > 40000 && x.size() < 55000, qPrintable(QString::number(x.size())));
    }

    void fluidBoxTouchesTheWallsItIsDrawnAgainst() {
        // Fluid rests with its centres half a spacing from a wall's fluid-side surface (the wall
        // shells lie half a spacing outside it: their distance is the rest spacing d0). A box
        // drawn flush with a wall must start there, whichever side the wall is on: laid from its
        // min side, a 0.2 m box flush with the max wall at r = 8.5 mm (11 layers of 17 mm) left
        // 21.5 mm, 13 mm more than the contact. Each case: the gap between the wall and the
        // nearest layer equals half the distance between that layer and the next.
        const float r = 0.0085f;
        struct Case {
            const char* geometry; // container and fluid box (JSON)
            int axis;
            bool maxWall;
        };
        const Case cases[] = {
            {R"("container": {"min": [0,0,0], "max": [1,1,1]}, "fluidBoxes": [{"min": [0.8,0,0.3], "max": [1,0.3,0.7]}])",
             0, true},
            {R"("container": {"min": [0,0,0], "max": [1,1,1]}, "fluidBoxes": [{"min": [0,0,0.3], "max": [0.2,0.3,0.7]}])",
             0, false},
            {R"("container": {"min": [0,0,0], "max": [1,1,1]}, "fluidBoxes": [{"min": [0.3,0,0.8], "max": [0.7,0.3,1]}])",
             2, true},
            {R"("container": {"min": [0,0,0], "max": [1,1,1]}, "fluidBoxes": [{"min": [0.3,0,0], "max": [0.7,0.3,0.2]}])",
             1, false},
            // Wall to wall in x and z: the layers along gravity are 17.29 mm (cell volume (2r)^3).
            {R"("container": {"min": [0,0,0], "max": [1.5,0.5,0.35]}, "fluidBoxes": [{"min": [0,0,0], "max": [1.5,0.25,0.35]}])",
             1, false}};
        for (const Case& c : cases) {
            const std::string text =
                std::string(R"({"name": "flush", "particleRadius": 0.0085, )") + c.geometry + "}";
            const SceneDescription s = parseSceneJson(text, "flush.json");
            std::vector<Vec3f> x, v;
            s.sampleFluid(r, x, v);
            QVERIFY(!x.empty());
            const int a = c.axis;
            const float wall = c.maxWall ? s.container.max[a] : s.container.min[a];
            std::vector<float> d;
            for (const Vec3f& p : x)
                d.push_back(std::abs(p[a] - wall));
            std::sort(d.begin(), d.end());
            d.erase(std::unique(d.begin(), d.end(), [](float p, float q) { return std::abs(p - q) < 1e-6f; }),
                    d.end());
            QVERIFY(d.size() >= 2);
            const float gap = d[0], half = 0.5f * (d[1] - d[0]);
            qInfo("%s: gap to the %s wall along %c %.2f mm, half spacing %.2f mm", c.geometry,
                  c.maxWall ? "max" : "min", "xyz"[a], 1e3f * gap, 1e3f * half);
            QVERIFY2(std::abs(gap - half) < 1e-5f, qPrintable(QString("gap %1 m").arg(gap)));
            QVERIFY(gap < 1.05f * r);
        }
    }

    void filledBoxIsWhereTheLatticeEnds() {
        // A pool 1.5 x 0.35 m (wall to wall) filled to 0.25 m at r = 8.5 mm: the cells keep the
        // volume (2r)^3, stretched in x and z, so the layers are 17.29 mm and 14 of them fill
        // 0.2421 m (14.46 rounded to the nearest count). filledBox says so; a body floats at its
        // draft below that level.
        const SceneDescription s = parseSceneJson(R"({"name": "pool", "particleRadius": 0.0085,
          "container": {"min": [0,0,0], "max": [1.5,0.5,0.35]},
          "fluidBoxes": [{"min": [0,0,0], "max": [1.5,0.25,0.35]}]})",
                                                  "pool.json");
        const Aabb filled = s.filledBox(0, 0.0085f);
        std::vector<Vec3f> x, v;
        s.sampleFluid(0.0085f, x, v);
        float top = 0.0f;
        for (const Vec3f& p : x)
            top = std::max(top, p.y());
        const double cellVolume = double(filled.extent().prod()) / double(x.size());
        qInfo("filled to %.4f m (top layer at %.4f m), cell volume / (2r)^3 = %.5f", filled.max.y(), top,
              cellVolume / std::pow(0.017, 3.0));
        QVERIFY(std::abs(filled.max.y() - 0.2421f) < 1e-4f);
        QVERIFY(std::abs(filled.max.y() - top - 0.5f * filled.max.y() / 14.0f) < 1e-5f);
        QVERIFY(std::abs(cellVolume / std::pow(0.017, 3.0) - 1.0) < 1e-4);
        QCOMPARE(filled.min.y(), 0.0f);
        QVERIFY(std::abs(filled.max.x() - 1.5f) < 1e-5f && std::abs(filled.max.z() - 0.35f) < 1e-5f);
    }

    void syntaxErrorNamesLineAndColumn() {
        const QString e = errorOf("{\n  \"name\": \"x\",\n  \"particleRadius\": 0.01,,\n}");
        QVERIFY2(e.startsWith("test.json:3:"), qPrintable(e));
        QVERIFY2(e.contains("syntax"), qPrintable(e));
        QVERIFY(errorOf("").contains("test.json:1:"));
        QVERIFY(errorOf("{\"a\": [1, 2").contains("test.json:1:"));
    }

    void missingFieldIsNamed() {
        QString e = errorOf(R"({"particleRadius": 0.01, "fluidBoxes": []})");
        QVERIFY2(e.contains("'container'"), qPrintable(e));
        e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0,0]}, "fluidBoxes": []})");
        QVERIFY2(e.contains("container.max"), qPrintable(e));
        e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,1,1]}})");
        QVERIFY2(e.contains("no fluid"), qPrintable(e));
    }

    void wrongTypeIsNamed() {
        QString e = errorOf(R"({"particleRadius": "small", "container": {"min": [0,0,0], "max": [1,1,1]}})");
        QVERIFY2(e.contains("'particleRadius'") && e.contains("number"), qPrintable(e));
        e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0], "max": [1,1,1]}})");
        QVERIFY2(e.contains("container.min") && e.contains("3 numbers"), qPrintable(e));
        e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,1,1]},
                        "fluidBoxes": [{"min": [0,0,0], "max": [0.1, "x", 0.1]}]})");
        QVERIFY2(e.contains("fluidBoxes[0].max"), qPrintable(e));
        e = errorOf(
            R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,1,1]}, "fluidBox": []})");
        QVERIFY2(e.contains("'fluidBox'") && e.contains("unknown"), qPrintable(e));
    }

    void geometryIsChecked() {
        QString e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,1,1]},
                                "fluidBoxes": [{"min": [0,0,0], "max": [2,1,1]}]})");
        QVERIFY2(e.contains("fluidBoxes[0]") && e.contains("inside the container"), qPrintable(e));
        e = errorOf(
            R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,-1,1]}, "fluidBoxes": []})");
        QVERIFY2(e.contains("container") && e.contains("exceed"), qPrintable(e));
    }

    void parameterErrorsNameParameterAndRange() {
        QString e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,1,1]},
                                "fluidBoxes": [{"min": [0,0,0], "max": [0.5,0.5,0.5]}], "parameters": {"viscosity": 3}})");
        QVERIFY2(e.contains("viscosity") && e.contains("[0, 1]"), qPrintable(e));
        e = errorOf(R"({"particleRadius": 0.01, "container": {"min": [0,0,0], "max": [1,1,1]},
                        "fluidBoxes": [{"min": [0,0,0], "max": [0.5,0.5,0.5]}], "parameters": {"viscosityy": 0.1}})");
        QVERIFY2(e.contains("unknown parameter 'viscosityy'"), qPrintable(e));
        e = errorOf(R"({"particleRadius": 5, "container": {"min": [0,0,0], "max": [10,10,10]},
                        "fluidBoxes": [{"min": [0,0,0], "max": [5,5,5]}]})");
        QVERIFY2(e.contains("particleRadius") && e.contains("range"), qPrintable(e));
    }

    void missingFileIsNamed() {
        try {
            loadSceneFile("/nonexistent/scene.json");
            QFAIL("expected SceneError");
        } catch (const SceneError& e) {
            QVERIFY(QString(e.what()).contains("/nonexistent/scene.json"));
        }
    }
    // ---- issue 30 ----
    void nestingIsLimitedWhileParsing() {
        // 64 levels parse; 65 are refused before any recursive code sees the tree (bodies nested
        // 100 000 deep overflowed the stack in dump(); tests/data/malformed holds that file).
        auto nested = [](int depth) {
            return std::string(size_t(depth), '[') + std::string(size_t(depth), ']');
        };
        QVERIFY(parseJsonChecked(nested(kMaxJsonDepth), "t.json").is_array());
        try {
            parseJsonChecked(nested(kMaxJsonDepth + 1), "t.json");
            QFAIL("65 levels accepted");
        } catch (const SceneError& e) {
            QVERIFY2(std::string(e.what()).find("t.json: JSON nesting deeper than 64 levels") !=
                         std::string::npos,
                     e.what());
        }
    }

    void duplicateKeysAreRefusedWithTheirPath() {
        const std::string base = R"({"name": "t", "particleRadius": 0.02,
            "container": {"min": [0, 0, 0], "max": [1, 0.6, 0.6]},
            "fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.3, 0.6]}])";
        auto error = [&](const std::string& tail) {
            try {
                parseSceneJson(base + tail, "t.json");
            } catch (const SceneError& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        QCOMPARE(error("}"), std::string("(no error)"));
        QVERIFY(error(R"(, "parameters": {"viscosity": 0.1, "viscosity": 0.2}})")
                    .find("field 'parameters.viscosity' is given twice") != std::string::npos);
        QVERIFY(error(R"(, "container": {"min": [0, 0, 0], "max": [2, 2, 2]}})")
                    .find("field 'container' is given twice") != std::string::npos);
        // The same key in two different objects is fine.
        QCOMPARE(error(R"(, "fluidSpheres": [{"center": [0.7, 0.3, 0.3], "radius": 0.1}]})"),
                 std::string("(no error)"));
    }

    void fpsAndBodyBoundsNameTheFieldAndTheRange() {
        const std::string base = R"({"name": "t", "particleRadius": 0.02,
            "container": {"min": [0, 0, 0], "max": [1, 0.6, 0.6]},
            "fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.3, 0.6]}])";
        auto error = [&](const std::string& tail) {
            try {
                parseSceneJson(base + tail, "t.json");
            } catch (const SceneError& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        QCOMPARE(error(R"(, "fps": 0.001})"), std::string("(no error)"));
        QCOMPARE(error(R"(, "fps": 1e6})"), std::string("(no error)"));
        QVERIFY(error(R"(, "fps": 0.0009})").find("field 'fps': out of range [0.001, 1e+06]") !=
                std::string::npos);
        const std::string body =
            R"(, "bodies": [{"shape": "box", "size": 0.1, "position": [0.6, 0.3, 0.3], )";
        QCOMPARE(error(body + R"("relativeDensity": 0.05}]})"), std::string("(no error)"));
        QVERIFY(error(body + R"("relativeDensity": 0.049}]})")
                    .find("'bodies[0].relativeDensity': 0.049 rho0 is out of range") != std::string::npos);
        // density in kg/m^3 is judged against the scene's restDensity.
        QCOMPARE(error(body + R"("density": 100}], "parameters": {"restDensity": 1000}})"),
                 std::string("(no error)"));
        QVERIFY(error(body + R"("density": 100}], "parameters": {"restDensity": 2500}})")
                    .find("'bodies[0].density': 0.04 rho0 is out of range [0.05, 25] rho0 (restDensity rho0 "
                          "= 2500") != std::string::npos);
        QVERIFY(error(body + R"("relativeDensity": 1, "velocity": [0, 0, 51]}]})")
                    .find("'bodies[0].velocity': speed |v| out of range [0, 50] m/s") != std::string::npos);
        QCOMPARE(error(body + R"("relativeDensity": 1, "angularVelocity": [0, 0, 100]}]})"),
                 std::string("(no error)"));
    }

    void fluidShapesMustNotOverlapOrBeEmpty() {
        const std::string head = R"({"name": "t", "particleRadius": 0.02, "gravity": [0, 0, 0],
            "container": {"min": [0, 0, 0], "max": [1, 0.6, 0.6]}, )";
        auto error = [&](const std::string& tail) {
            try {
                parseSceneJson(head + tail, "t.json");
            } catch (const SceneError& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        // Two boxes side by side whose lattices stay 2r apart: fine.
        QCOMPARE(
            error(
                R"("fluidBoxes": [{"min": [0, 0, 0], "max": [0.32, 0.3, 0.6]}, {"min": [0.32, 0, 0], "max": [0.6, 0.3, 0.6]}]})"),
            std::string("(no error)"));
        // Touching at 0.3 m: the first box's 8 layers (7.5 rounded up) reach 0.32 m, into the second
        // (from rest, without gravity, that start threw the fluid at 27 m/s).
        QVERIFY(
            error(
                R"("fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.3, 0.6]}, {"min": [0.3, 0, 0], "max": [0.6, 0.3, 0.6]}]})")
                .find("field 'fluidBoxes[1]' overlaps 'fluidBoxes[0]' at particleRadius r = 0.02 m") !=
            std::string::npos);
        QVERIFY(
            error(
                R"("fluidSpheres": [{"center": [0.3, 0.3, 0.3], "radius": 0.1}, {"center": [0.45, 0.3, 0.3], "radius": 0.1}]})")
                .find("field 'fluidSpheres[1]' overlaps 'fluidSpheres[0]'") != std::string::npos);
        QVERIFY(error(R"("fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.019, 0.6]}]})")
                    .find("'fluidBoxes[0]': the box holds no particle at particleRadius r = 0.02 m") !=
                std::string::npos);
        QCOMPARE(error(R"("fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.021, 0.6]}]})"),
                 std::string("(no error)"));
        // The same box at a finer radius used by run --radius holds particles: checked at that r.
        const SceneDescription s = parseSceneJson(
            head + R"("fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.05, 0.6]}]})", "t.json");
        QVERIFY_THROWS_EXCEPTION(SceneError, s.checkFluidAt(0.11f));
        s.checkFluidAt(0.01f);
    }

    void budgetCountsWallsAndFollowsMemory() {
        SceneDescription s = SceneLibrary::load("tank");
        const float r = s.particleRadius;
        const SceneBudget b = s.budget(r, 2);
        QVERIFY(b.fluidParticles > 1000 && b.wallParticles > 1000 && b.bytes > 0);
        s.checkBudget(r, 2);
        // A 100 m container: the walls alone are ~3e8 particles.
        s.container = Aabb(Vec3f::Zero(), Vec3f::Constant(100.0f));
        QVERIFY(s.budget(0.01f, 2).wallParticles > 2.9e8);
        try {
            s.checkBudget(0.01f, 2);
            QFAIL("a 100 m container at r = 10 mm accepted");
        } catch (const SceneError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("fields 'particleRadius' (r = 0.01 m) and 'container'") != std::string::npos &&
                         m.find("wall particles") != std::string::npos &&
                         m.find("limit 2e+07 particles") != std::string::npos,
                     e.what());
        }
        // The memory share: pinned to 1 MB, the tank is refused with the estimate in MiB.
        s = SceneLibrary::load("tank");
        qputenv("OCTO_MEMORY_BUDGET_MB", "1");
        QCOMPARE(availableMemoryBytes(), uint64_t(1) << 20);
        QVERIFY_THROWS_EXCEPTION(SceneError, s.checkBudget(r, 2));
        qunsetenv("OCTO_MEMORY_BUDGET_MB");
        QVERIFY(availableMemoryBytes() > (uint64_t(1) << 20));
        s.checkBudget(r, 2);
    }
};

QTEST_APPLESS_MAIN(TestSceneJson)
#include "test_scene_json.moc"
