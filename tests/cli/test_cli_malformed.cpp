// Hostile input through the real binary: every corpus file (tests/data/malformed) and the
// command-line cases of issue 9 give exit != 0 and one line on stderr naming the problem, within
// seconds (no hang), and `reconstruct` never overwrites its input nor allocates for a frame range.
#include "../core/io/MalformedCorpus.h"
#include "CliRunner.h"
#include "io/ParticleIo.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace octo;
using namespace octo::test;

class TestCliMalformed : public QObject {
    Q_OBJECT
private:
    static void expectRefusal(const CliResult& r, const std::vector<std::string>& expected,
                              const QString& what) {
        QVERIFY2(r.code != -1, qPrintable(what + ": timed out (hang?)"));
        QVERIFY2(r.code != 0 && r.code != -2, qPrintable(what + QString(": exit %1").arg(r.code)));
        const QString err = r.err.trimmed();
        QVERIFY2(!err.contains('\n'), qPrintable(what + ": more than one line: " + err));
        for (const std::string& e : expected)
            QVERIFY2(err.contains(QString::fromStdString(e)),
                     qPrintable(what + ": expected '" + QString::fromStdString(e) + "' in: " + err));
    }
    static void writeBlock(const QString& path) {
        ParticleData d;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                for (int k = 0; k < 4; ++k)
                    d.positions.emplace_back(0.02f * i, 0.02f * j, 0.02f * k);
        writeParticlesPly(path.toStdString(), d);
    }

private slots:
    void initTestCase() { QVERIFY2(cliExists(), qPrintable("octofluid-cli not found at " + cliPath())); }

    void corpusThroughTheBinary() {
        QTemporaryDir dir;
        const QString out = dir.filePath("out.obj");
        int checked = 0;
        for (const MalformedCase& c : malformedCases()) {
            const QString file = QString::fromStdString(c.file);
            QStringList args;
            if (c.kind == "particles" || c.kind == "reconstruct")
                args = {"reconstruct", file, out, "--radius", "0.01"};
            else if (c.kind == "scene" || c.kind == "simulation")
                args = {"run", "--scene-file", file, "--frames", "2"};
            else
                continue;
            expectRefusal(runCli(args, 60000), c.expected, file);
            QVERIFY2(!QFile::exists(out), qPrintable(file));
            ++checked;
        }
        QVERIFY(checked >= 30);
    }

    void runRefusesBadArgumentsWithClearMessages() {
        expectRefusal(runCli({"run", "--scene", "tank", "--frames", "99999999999999999999"}),
                      {"--frames", "out of range"}, "--frames huge");
        expectRefusal(runCli({"run", "--scene", "tank", "--frames", "2.5"}), {"--frames", "whole number"},
                      "--frames 2.5");
        expectRefusal(runCli({"run", "--scene", "tank", "--frames", "1", "--particles", "1"}),
                      {"--particles 1", "particleRadius", "this scene takes about"}, "--particles 1");
        expectRefusal(runCli({"run", "--scene-file", "/dev/zero", "--frames", "1"}), {"not a regular file"},
                      "/dev/zero");
        expectRefusal(runCli({"run", "--scene", "tank", "--frames", "1", "--set", "minIterations=20", "--set",
                              "maxIterations=10"}),
                      {"'minIterations' = 20", "'maxIterations' = 10", "conflict"}, "min > max iterations");
        expectRefusal(runCli({"run", "--scene", "tank", "--frames", "1", "--set", "timeStepMin=0.009"}),
                      {"'timeStepMin' = 0.009", "'timeStepMax' = 0.005"}, "dt min > max");
        expectRefusal(
            runCli({"run", "--scene", "tank", "--frames", "1", "--set", "tLow=5", "--set", "tHigh=1"}),
            {"'tLow' = 5", "'tHigh' = 1"}, "tLow > tHigh");
    }

    void runFailsLoudlyWhenTheSurfaceFails() {
        // Used to drop the surface with exit 0 and no message unless --export-mesh was given.
        expectRefusal(
            runCli({"run", "--scene", "tank", "--radius", "0.02", "--frames", "2", "--set", "leafSize=1e-9"}),
            {"surface reconstruction failed", "surfaceEnabled=false"}, "leafSize 1e-9");
    }

    void statsToAFullDeviceFails() {
        QTemporaryDir dir;
        const QString in = dir.filePath("block.ply");
        writeBlock(in);
        expectRefusal(runCli({"reconstruct", in, dir.filePath("m.obj"), "--radius", "0.01", "--stats-json",
                              "/dev/full"}),
                      {"/dev/full", "write failed"}, "reconstruct --stats-json /dev/full");
        expectRefusal(runCli({"run", "--scene", "tank", "--radius", "0.02", "--frames", "1", "--set",
                              "surfaceEnabled=false", "--stats-json", "/dev/full"}),
                      {"--stats-json", "failed"}, "run --stats-json /dev/full");
    }

    void reconstructRefusesToOverwriteItsInput() {
        QTemporaryDir dir;
        const QString in = dir.filePath("block.ply");
        writeBlock(in);
        QFile f(in);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        expectRefusal(runCli({"reconstruct", in, in, "--radius", "0.01"}),
                      {"block.ply", "refusing to overwrite"}, "in == out");
        // The same file through another spelling of its path.
        expectRefusal(runCli({"reconstruct", in, dir.path() + "/./block.ply", "--radius", "0.01"}),
                      {"refusing to overwrite"}, "in == ./out");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }

    void reconstructRangeFollowsTheFilesThatExist() {
        // --last 2000000000 with two files used to reserve the whole range (4.2 GB, bad_alloc).
        QTemporaryDir dir;
        writeBlock(dir.filePath("f_0001.ply"));
        writeBlock(dir.filePath("f_0002.ply"));
        const CliResult r = runCli({"reconstruct", dir.filePath("f_%04d.ply"), dir.filePath("m_%04d.obj"),
                                    "--radius", "0.01", "--first", "0", "--last", "2000000000"},
                                   30000);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(dir.filePath("m_0001.obj")) && QFile::exists(dir.filePath("m_0002.obj")));
        expectRefusal(runCli({"reconstruct", dir.filePath("f_%04d.ply"), dir.filePath("m_%04d.obj"),
                              "--first", "5", "--last", "9"}),
                      {"no input files match", "--first/--last"}, "empty range");
        expectRefusal(runCli({"reconstruct", dir.filePath("f_%04d.ply"), dir.filePath("m_%04d.obj"), "--last",
                              "99999999999999999999"}),
                      {"--last", "out of range"}, "--last huge");
    }

    void reconstructUsesTheParameterTable() {
        // The aliases and --set go through the same table, names and ranges as run --set.
        QTemporaryDir dir;
        const QString in = dir.filePath("block.ply"), out = dir.filePath("m.obj");
        writeBlock(in);
        const CliResult alias = runCli({"reconstruct", in, out, "--lambda", "7"});
        const CliResult set = runCli({"reconstruct", in, out, "--set", "lambdaMin=7"});
        const CliResult run = runCli({"run", "--scene", "tank", "--frames", "1", "--set", "lambdaMin=7"});
        for (const CliResult* r : {&alias, &set, &run})
            expectRefusal(*r, {"parameter 'lambdaMin' = 7 is out of range [0, 1]"}, "lambdaMin=7");
        expectRefusal(runCli({"reconstruct", in, out, "--set", "tLow=5", "--set", "tHigh=1"}),
                      {"'tLow' = 5", "'tHigh' = 1", "conflict"}, "reconstruct tLow > tHigh");
        expectRefusal(runCli({"reconstruct", in, out, "--set", "viscosity=0.1"}),
                      {"'viscosity' does not act on reconstruct"}, "reconstruct viscosity");
        expectRefusal(runCli({"reconstruct", in, out, "--radius", "5"}),
                      {"'particleRadius' = 5 is out of range"}, "reconstruct --radius 5");
        const CliResult ok = runCli({"reconstruct", in, out, "--leaf", "0.01", "--method", "uniform", "--set",
                                     "kernelRadiusFactor=3.5", "-q"});
        QVERIFY2(ok.code == 0, qPrintable(ok.err));
        QVERIFY(QFile::exists(out));
    }
};

QTEST_APPLESS_MAIN(TestCliMalformed)
#include "test_cli_malformed.moc"
