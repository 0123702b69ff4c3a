// octofluid-cli validate spheric2: finds its scene and the experiment's data beside the binary,
// and reading the frames of `run --export-ply` gives the same gauges as simulating directly.
#include "CliRunner.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

class TestCliValidate : public QObject {
    Q_OBJECT
private:
    using Result = octo::test::CliResult;
    static Result run(const QStringList& args) { return octo::test::runCli(args); }
    /// The summary row of one gauge reading ("fill   0.0123 ... m ...").
    static QString summaryRow(const QString& out, const QString& method) {
        for (const QString& line : out.split('\n'))
            if (line.startsWith(method + " "))
                return line.simplified();
        return {};
    }

private slots:
    void initTestCase() {
        QVERIFY2(octo::test::cliExists(), qPrintable("octofluid-cli not found at " + octo::test::cliPath()));
    }

    void simulatedAndRecordedRunsReadTheSameGauges() {
        // r = 40 mm: the box (0.161 m) is just over the 4r a body needs; 0.3 s, ~1 400 particles.
        QTemporaryDir dir;
        const QStringList common{"--radius", "0.04", "--seconds", "0.3"};
        const Result direct = run(QStringList{"validate", "spheric2", "--set", "surfaceEnabled=false",
                                              "--csv", dir.filePath("direct.csv")} +
                                  common);
        QVERIFY2(direct.code == 0, qPrintable(direct.err));
        QVERIFY2(direct.out.contains("over 0 <= t <= 0.300 s (16 samples per gauge)"),
                 qPrintable(direct.out));

        const QString scene = QFileInfo(octo::test::cliPath())
                                  .dir()
                                  .filePath("../share/octofluid/validation/spheric-test2.json");
        const Result recorded =
            run({"run", "--scene-file", scene, "--radius", "0.04", "--frames", "15", "--fps", "50", "--set",
                 "surfaceEnabled=false", "--export-ply", dir.filePath("ply")});
        QVERIFY2(recorded.code == 0, qPrintable(recorded.err));
        const Result replay =
            run(QStringList{"validate", "spheric2", "--from-ply", dir.filePath("ply")} + common);
        QVERIFY2(replay.code == 0, qPrintable(replay.err));

        for (const char* method : {"fill", "top", "wetted"}) {
            const QString a = summaryRow(direct.out, method), b = summaryRow(replay.out, method);
            QVERIFY2(!a.isEmpty(), qPrintable(direct.out));
            QCOMPARE(b, a);
        }
        QFile csv(dir.filePath("direct.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 17); // header + t = 0, 0.02, ..., 0.3
        QVERIFY(lines[0].startsWith("t_s,H1_fill_m,"));
    }

    void refusesUnknownCasesTimesPastTheDataAndOverwritingTheData() {
        Result r = run({"validate", "spheric9"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("unknown case 'spheric9'"), qPrintable(r.err));
        r = run({"validate", "spheric2", "--seconds", "9"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("the experiment ends at 7.38 s"), qPrintable(r.err));
        const QString data =
            QFileInfo(octo::test::cliPath()).dir().filePath("../share/octofluid/validation/");
        QFile probes(data + "kleefsman_probes.csv");
        QVERIFY(probes.open(QIODevice::ReadOnly));
        const QByteArray before = probes.readAll();
        r = run({"validate", "spheric2", "--csv", data + "kleefsman_probes.csv"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("refusing to overwrite"), qPrintable(r.err));
        probes.seek(0);
        QCOMPARE(probes.readAll(), before);
    }
};

QTEST_APPLESS_MAIN(TestCliValidate)
#include "test_cli_validate.moc"
