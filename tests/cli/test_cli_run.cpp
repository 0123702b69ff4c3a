// octofluid-cli run / bench: exit codes, one line per frame, the stable --stats-json names.
// The binary's path is compiled in (CliRunner.h); a missing binary fails the test.
#include "CliRunner.h"
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
