// octofluid-cli run / bench: exit codes, one line per frame, the stable --stats-json names.
// The binary's path is compiled in (CliRunner.h); a missing binary fails the test.
#include "CliRunner.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

class TestCliRun : public QObject {
    Q_OBJECT
private:
    using Result = octo::test::CliResult;
    static Result run(const QStringList& args, int timeoutMs = 120000) {
        return octo::test::runCli(args, timeoutMs);
    }

private slots:
    void initTestCase() {
        QVERIFY2(octo::test::cliExists(), qPrintable("octofluid-cli not found at " + octo::test::cliPath()));
    }

    void runPrintsOneLinePerFrameAndStatsJson() {
        QTemporaryDir dir;
        const QString json = dir.filePath("stats.jsonl"), ply = dir.filePath("ply");
        const Result r = run({"run", "--scene", "dam-break", "--particles", "3000", "--frames", "3",
                              "--stats-json", json, "--export-ply", ply, "--set", "viscosity=0.02"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        int frameLines = 0;
        for (const QString& line : r.out.split('\n'))
            if (QRegularExpression("^\\s+\\d+\\s+\\d").match(line).hasMatch())
                ++frameLines;
        QCOMPARE(frameLines, 3);
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        for (int i = 0; i < lines.size(); ++i) {
            const QJsonObject o = QJsonDocument::fromJson(lines[i]).object();
            for (const char* key : {"frame", "time", "steps", "dt", "iterations", "maxDensityError",
                                    "fluidParticles", "boundaryParticles", "tpsMs", "nan", "escaped"})
                QVERIFY2(o.contains(key), key);
            QCOMPARE(o["frame"].toInt(), i + 1);
            QCOMPARE(o["nan"].toInt(), 0);
            QVERIFY(o["iterations"].toDouble() >= 3.0);
            QVERIFY(o["fluidParticles"].toInt() > 2000);
        }
        QVERIFY(QFile::exists(ply + "/frame_00003.ply"));
    }

    void bodyStatsCarryTheFluidForce() {
        // A box held under water (kinematic, at rest): its frame line reports the fluid's force,
        // about rho0 g V upwards once the pool has settled (test_buoyancy measures it to 5 %).
        QTemporaryDir dir;
        const QString scene = dir.filePath("held.json"), json = dir.filePath("stats.jsonl");
        QFile s(scene);
        QVERIFY(s.open(QIODevice::WriteOnly));
        s.write(R"({"name": "held", "particleRadius": 0.02,
            "container": {"min": [0, 0, 0], "max": [0.6, 0.6, 0.4]},
            "fluidBoxes": [{"min": [0, 0, 0], "max": [0.6, 0.4, 0.4]}],
            "bodies": [{"name": "held", "shape": "box", "size": 0.16, "relativeDensity": 1.0,
                        "position": [0.3, 0.16, 0.2], "kinematic": {"velocity": [0, 0, 0]}}]})");
        s.close();
        const Result r = run({"run", "--scene-file", scene, "--frames", "12", "--fps", "20", "--stats-json",
                              json, "--set", "surfaceEnabled=false"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 12);
        const QJsonObject body =
            QJsonDocument::fromJson(lines.last()).object()["bodies"].toArray()[0].toObject();
        QVERIFY2(body["kinematic"].toBool(), "the held box is kinematic");
        const QJsonArray force = body["fluidForce"].toArray();
        QCOMPARE(force.size(), 3);
        const double archimedes = 1000.0 * 9.81 * 0.16 * 0.16 * 0.16;
        qInfo("held box: fluid force (%.2f, %.2f, %.2f) N, rho0 g V = %.2f N", force[0].toDouble(),
              force[1].toDouble(), force[2].toDouble(), archimedes);
        QVERIFY2(force[1].toDouble() > 0.7 * archimedes && force[1].toDouble() < 1.3 * archimedes,
                 "the water must push the held box up with about its buoyancy");
    }

    void errorsExitNonZeroWithOneLine() {
        for (const QStringList& args :
             {QStringList{"run", "--scene", "no-such-scene", "--frames", "1"},
              QStringList{"run", "--scene", "tank", "--frames", "1", "--bogus"},
              QStringList{"run", "--scene", "tank", "--frames", "x"},
              QStringList{"run", "--scene", "tank", "--frames", "1", "--set", "viscosity=7"},
              QStringList{"run", "--scene", "tank", "--particles", "2000", "--frames", "1", "--export-ply",
                          "/proc/forbidden"},
              QStringList{"run", "--scene-file", "/nonexistent.json", "--frames", "1"}}) {
            const Result r = run(args);
            QVERIFY2(r.code != 0, qPrintable(args.join(' ')));
            QCOMPARE(r.err.trimmed().count('\n'), 0);
            QVERIFY2(r.err.contains("error"), qPrintable(r.err));
        }
        const Result r = run({"run", "--scene", "tank", "--frames", "1", "--set", "viscosity=7"});
        QVERIFY(r.err.contains("viscosity") && r.err.contains("[0, 1]"));
    }

    void benchQuickPrintsTable() {
        const Result r = run({"bench", "solver", "--quick"}, 600000);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("us/p-step"));
    }
};

QTEST_GUILESS_MAIN(TestCliRun)
#include "test_cli_run.moc"
