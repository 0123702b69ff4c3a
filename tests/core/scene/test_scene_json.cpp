// Scene JSON: the built-in scenes load; malformed or incomplete files give errors naming the
// line:column or the field; parameter range errors name the parameter and its range.
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
};

QTEST_APPLESS_MAIN(TestSceneJson)
#include "test_scene_json.moc"
