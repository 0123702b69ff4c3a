// Scene files from the malformed-input corpus (tests/data/malformed, kind "scene") are refused at
// load with their one-line error; non-regular and oversized scene files are refused before any
// byte is read (run --scene-file /dev/zero used to grow without bound).
#include "../io/MalformedCorpus.h"
#include "scene/Scene.h"

#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace octo;
using namespace octo::test;

class TestSceneMalformed : public QObject {
    Q_OBJECT
private:
    static std::string errorOf(const std::string& path) {
        try {
            loadSceneFile(path);
        } catch (const SceneError& e) {
            return e.what();
        }
        return "(no error)";
    }

private slots:
    void corpusScenesAreRefused() {
        int checked = 0;
        for (const MalformedCase& c : malformedCases()) {
            if (c.kind != "scene")
                continue;
            const std::string error = errorOf(c.file);
            const std::string missing = missingFrom(c, error);
            QVERIFY2(missing.empty(), missing.c_str());
            QVERIFY2(error.find('\n') == std::string::npos, error.c_str());
            ++checked;
        }
        QVERIFY(checked >= 7);
    }

    void bodyPlacementCasesParse() {
        // "simulation" cases are valid JSON: they are refused when the bodies are placed (tests/cli).
        int checked = 0;
        for (const MalformedCase& c : malformedCases())
            if (c.kind == "simulation") {
                QCOMPARE(errorOf(c.file), std::string("(no error)"));
                ++checked;
            }
        QVERIFY(checked >= 4);
    }

    void deviceAndOversizedFilesAreRefused() {
        QVERIFY(errorOf("/dev/zero").find("not a regular file") != std::string::npos);
        QVERIFY(errorOf(malformedDir()).find("not a regular file") != std::string::npos);
        QVERIFY(errorOf(malformedDir() + "/nope.json").find("cannot open") != std::string::npos);
        const std::string path = std::string(OCTO_TEST_OUTPUT_DIR) + "/huge_scene.json";
        {
            std::ofstream f(path);
            QVERIFY(f.good());
        }
        std::filesystem::resize_file(path, kMaxSceneFileBytes + 1); // sparse: nothing to read
        const std::string error = errorOf(path);
        std::filesystem::remove(path);
        QVERIFY2(error.find("larger than the limit of 16 MiB") != std::string::npos, error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestSceneMalformed)
#include "test_scene_malformed.moc"
