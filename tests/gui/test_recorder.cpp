// Recording writes numbered, non-blank PNGs of the chosen size on a background thread; an
// unwritable folder or a failing write stops it with a clear message while the simulation runs.
#include "GuiTestUtil.h"
#include "gui/FrameRecorder.h"
#include "gui/MainWindow.h"
#include "gui/RecordingDock.h"

#include <QImageReader>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {
std::unique_ptr<octo::app::MainWindow> syntheticWindow(int n = 8, int stepDelayMs = 0) {
    octo::app::MainWindowOptions o;
    o.scene = "synthetic";
    o.persistSettings = false;
    o.factory = [n, stepDelayMs](const std::string&, const std::vector<std::string>&) {
        auto model = std::make_unique<octo::app::SyntheticModel>(n);
        model->setStepDelayMs(stepDelayMs);
        return model;
    };
    return std::make_unique<octo::app::MainWindow>(o);
}

/// frames.csv of a take: (frame, time) rows after the header.
std::vector<std::pair<int, double>> readCsv(const QString& folder, QString* header = nullptr) {
    QFile f(QDir(folder).filePath("frames.csv"));
    std::vector<std::pair<int, double>> rows;
    if (!f.open(QIODevice::ReadOnly))
        return rows;
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    for (int i = 0; i < lines.size(); ++i) {
        if (i == 0) {
            if (header)
                *header = lines[i];
            continue;
        }
        const QStringList cells = lines[i].split(',');
        rows.push_back({cells.value(0).toInt(), cells.value(1).toDouble()});
    }
    return rows;
}

/// Pixels darker than the sky and floor in every channel (the badge's plate) inside `r`.
int darkPixels(const QImage& image, const QRect& r) {
    int count = 0;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x) {
            const QRgb c = image.pixel(x, y);
            count += qRed(c) < 90 && qGreen(c) < 90 && qBlue(c) < 110;
        }
    return count;
}
} // namespace

using namespace octo;

class TestRecorder : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useCoreProfile(); }

    void recordsTenFramesFromTheRunningApp() {
        QTemporaryDir dir;
        app::MainWindowOptions o;
        o.scene = "synthetic";
        o.persistSettings = false;
        o.factory = [](const std::string&, const std::vector<std::string>&) {
            return std::make_unique<app::SyntheticModel>(12);
        };
        app::MainWindow window(o);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.worker()->latestFrame());
        render::RenderSettings look = window.viewport()->settings();
        look.showParticles = true; // the synthetic wave moves its particles (its mesh is a fixed box,
        look.showMesh = false;     // whose water shading covers them: ~1 run in 10 saw no change)
        window.setRenderSettings(look);
        const QSize size(320, 240);
        QString error;
        QVERIFY2(window.startRecording(dir.path(), size, 10, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!window.recorder()->isRecording(), 20000);
        QCOMPARE(window.recorder()->framesWritten(), 10);
        for (int i = 0; i < 10; ++i) {
            const QString path = app::FrameRecorder::framePath(dir.path(), i);
            QImage image(path);
            QVERIFY2(!image.isNull(), qPrintable(path));
            QCOMPARE(image.size(), size);
            QVERIFY2(test::distinctColors(image) > 10, qPrintable(path + " is blank"));
        }
        QVERIFY(!QFile::exists(app::FrameRecorder::framePath(dir.path(), 10)));
        // Consecutive frames show an animated scene: the first and last differ.
        QVERIFY(test::differingPixels(QImage(app::FrameRecorder::framePath(dir.path(), 0)),
                                      QImage(app::FrameRecorder::framePath(dir.path(), 9))) > 0);
    }

    void recordsEverySimulatedFrameExactlyOnce() {
        // Issue 27, 1: the worker steps as fast as it can (no delay) while the GUI renders each
        // frame off-screen; every frame of the scene (4 synthetic steps, 0.02 s) is in the take,
        // once, at 1 / fps spacing, and no step in between.
        QTemporaryDir dir;
        auto window = syntheticWindow(10, 0);
        window->show();
        QTRY_VERIFY(window->worker()->latestFrame());
        const double t0 = window->worker()->latestFrame()->snapshot->time;
        QString error;
        QVERIFY2(window->startRecording(dir.path(), QSize(96, 64), 25, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!window->recorder()->isRecording(), 30000);
        QCOMPARE(window->recorder()->framesWritten(), 25);
        QString header;
        const auto rows = readCsv(dir.path(), &header);
        QCOMPARE(header, QString("frame,time"));
        QCOMPARE(int(rows.size()), 25);
        for (int i = 0; i < 25; ++i) {
            QCOMPARE(rows[size_t(i)].first, i);
            QVERIFY(QFile::exists(app::FrameRecorder::framePath(dir.path(), i)));
            if (i > 0)
                QVERIFY2(std::abs(rows[size_t(i)].second - rows[size_t(i - 1)].second - 0.02) < 1e-9,
                         qPrintable(QString("frame %1: t = %2 after %3")
                                        .arg(i)
                                        .arg(rows[size_t(i)].second)
                                        .arg(rows[size_t(i - 1)].second)));
        }
        QVERIFY(rows.front().second > t0 - 1e-12);
        // The simulation goes on after the take.
        const auto steps = window->worker()->latestFrame()->snapshot->step;
        QTRY_VERIFY(window->worker()->latestFrame()->snapshot->step > steps + 3);
    }

    void aNewTakeNeverMixesWithAnOldOne() {
        QTemporaryDir parent;
        const QString folder = parent.filePath("take");
        auto window = syntheticWindow();
        window->show();
        QTRY_VERIFY(window->worker()->latestFrame());
        QVERIFY(window->startRecording(folder, QSize(64, 48), 3));
        QTRY_VERIFY_WITH_TIMEOUT(!window->recorder()->isRecording(), 20000);
        QCOMPARE(window->recorder()->folder(), folder);
        QVERIFY(window->startRecording(folder, QSize(64, 48), 5));
        QCOMPARE(window->recorder()->folder(), folder + "-002");
        QVERIFY2(window->recordingStatus().contains("older take"), qPrintable(window->recordingStatus()));
        QTRY_VERIFY_WITH_TIMEOUT(!window->recorder()->isRecording(), 20000);
        QCOMPARE(int(readCsv(folder).size()), 3); // the first take is untouched
        QVERIFY(!QFile::exists(app::FrameRecorder::framePath(folder, 3)));
        QCOMPARE(int(readCsv(folder + "-002").size()), 5);
        // The command line refuses a non-empty folder instead.
        QString error;
        QVERIFY(!window->startRecording(folder, QSize(64, 48), 2, &error,
                                        app::FrameRecorder::ExistingFolder::Refuse));
        QVERIFY2(error.contains("not empty"), qPrintable(error));
        QCOMPARE(int(readCsv(folder).size()), 3);
    }

    void aFolderInProcIsReportedForWhatItIs() {
        app::FrameRecorder recorder;
        QString error;
        QVERIFY(!recorder.start("/proc/octofluid-test-frames", QSize(64, 64), 1, &error));
        QVERIFY2(!error.contains("No such file"), qPrintable(error));
        QVERIFY2(error.contains("'/proc'") && error.contains("does not accept new folders"),
                 qPrintable(error));
    }

    void recordedImagesHaveNoInterfaceBadges() {
        auto window = syntheticWindow();
        window->resize(900, 600);
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        QTRY_VERIFY(window->worker()->latestFrame());
        QTRY_VERIFY(window->worker()->latestFrame()->playing);
        const QSize size(320, 240);
        const QImage withBadge = window->viewport()->renderToImage(size);
        const QImage recorded =
            window->viewport()->renderRecordedFrame(window->worker()->latestFrame(), size, false);
        QVERIFY(!recorded.isNull());
        const QRect badge(10, 10, 100, 14); // the "Playing  Tool: Orbit" plate, top left
        QVERIFY2(darkPixels(withBadge, badge) > 200, "the live view's image shows the badge");
        QVERIFY2(darkPixels(recorded, badge) < 20, "a recorded frame shows no badge");
    }

    void mp4GoesThroughFfmpegOrSaysItIsMissing() {
        QTemporaryDir dir;
        auto window = syntheticWindow();
        window->show();
        QTRY_VERIFY(window->worker()->latestFrame());
        window->recordingDock()->setFormat(app::RecordingDock::Format::Mp4);
        const QByteArray path = qgetenv("PATH");
        // No ffmpeg on the PATH: refused before anything is written, with the way out.
        qputenv("PATH", dir.filePath("empty").toUtf8());
        QString error;
        const bool started = window->startRecording(dir.filePath("a"), QSize(64, 48), 3, &error);
        QVERIFY(!started);
        QVERIFY2(error.contains("ffmpeg") && error.contains("not installed"), qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir.filePath("a")));
        // A stand-in ffmpeg that records its arguments and writes the output file.
        QVERIFY(QDir().mkpath(dir.filePath("bin")));
        QFile fake(dir.filePath("bin/ffmpeg"));
        QVERIFY(fake.open(QIODevice::WriteOnly));
        fake.write(
            "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\nfor a; do last=$a; done\n: > \"$last\"\n");
        fake.close();
        fake.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("PATH", dir.filePath("bin").toUtf8() + ":" + path);
        QStringList done;
        connect(window->recordingDock(), &app::RecordingDock::done, this,
                [&](bool ok, const QString& m) { done << QString(ok ? "ok: " : "failed: ") + m; });
        QVERIFY2(window->startRecording(dir.filePath("b"), QSize(64, 48), 3, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 20000);
        qputenv("PATH", path);
        QVERIFY2(done[0].startsWith("ok") && done[0].contains("octofluid.mp4"), qPrintable(done[0]));
        QVERIFY(QFileInfo::exists(dir.filePath("b/octofluid.mp4")));
        QFile args(dir.filePath("bin/args"));
        QVERIFY(args.open(QIODevice::ReadOnly));
        const QString line = QString::fromUtf8(args.readAll());
        QVERIFY2(line.contains("-framerate 50 ") && line.contains("frame_%06d.png"), qPrintable(line));
    }

    void commandLineRecordsFramesAndExits() {
        // octofluid --scene NAME --record DIR --frames N --size WxH: N simulated frames, then exit 0.
        const QString binary = QCoreApplication::applicationDirPath() + "/../app/octofluid";
        QVERIFY2(QFileInfo::exists(binary), "build the octofluid target first");
        QTemporaryDir dir;
        const QString folder = dir.filePath("movie");
        QProcess p;
        p.start(binary, {"--scene", "drop", "--record", folder, "--frames", "3", "--size", "160x120"});
        QVERIFY(p.waitForFinished(300000));
        const QString out = QString::fromLocal8Bit(p.readAllStandardOutput() + p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(out));
        const auto rows = readCsv(folder);
        QCOMPARE(int(rows.size()), 3);
        for (int i = 0; i < 3; ++i) {
            const QImage image(app::FrameRecorder::framePath(folder, i));
            QCOMPARE(image.size(), QSize(160, 120));
            QVERIFY(test::distinctColors(image) > 10);
        }
        QVERIFY2(rows[2].second > rows[0].second, qPrintable(out));
        // A second run into the same folder is refused: the take stays whole.
        p.start(binary, {"--scene", "drop", "--record", folder, "--frames", "2", "--size", "160x120"});
        QVERIFY(p.waitForFinished(300000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains("not empty"));
        QCOMPARE(int(readCsv(folder).size()), 3);
        // Bad numbers are refused with a message, never a disabled timeout or a hang.
        for (const QStringList& args :
             {QStringList{"--timeout", "abc", "--record", folder + "x", "--frames", "1"},
              QStringList{"--timeout", "3e6", "--record", folder + "x", "--frames", "1"},
              QStringList{"--benchmark", "-5"}, QStringList{"--benchmark", "abc"},
              QStringList{"--record", folder + "x", "--frames", "0"}}) {
            p.start(binary, args);
            QVERIFY(p.waitForFinished(60000));
            QCOMPARE(p.exitCode(), 2);
            QVERIFY2(!p.readAllStandardError().isEmpty(), qPrintable(args.join(' ')));
        }
    }

    void badNumbersAreRefusedBeforeTheDisplayOpens() {
        // Issue 30: --timeout was checked only after QApplication had opened the display; without
        // a display `--timeout abc` said "no display". The values are now checked first.
        const QString binary = QCoreApplication::applicationDirPath() + "/../app/octofluid";
        QVERIFY2(QFileInfo::exists(binary), "build the octofluid target first");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            env.remove(v);
        QProcess p;
        p.setProcessEnvironment(env);
        const struct {
            QStringList args;
            QString message;
        } cases[] = {
            {{"--timeout", "abc", "--record", "x", "--frames", "1"},
             "--timeout expects seconds in (0, 86400], got 'abc'"},
            {{"--timeout", "3e6", "--screenshot", "x.png"},
             "--timeout expects seconds in (0, 86400], got '3e6'"},
            {{"--timeout", "0"}, "--timeout expects seconds in (0, 86400], got '0'"},
            {{"--timeout", "nan"}, "--timeout expects seconds in (0, 86400], got 'nan'"},
            {{"--benchmark", "-5"}, "--benchmark expects seconds in (0, 86400], got '-5'"},
            {{"--record", "x", "--frames", "abc"},
             "--record needs --frames N with N in 1..1000000, got 'abc'"},
            {{"--size", "10x10"}, "--size expects WxH with W and H >= 16, e.g. 1280x720, got '10x10'"},
        };
        for (const auto& c : cases) {
            p.start(binary, c.args);
            QVERIFY(p.waitForFinished(30000));
            const QString err = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
            QVERIFY2(p.exitCode() == 2 && err == "octofluid: " + c.message,
                     qPrintable(c.args.join(' ') + " -> " + QString::number(p.exitCode()) + ": " + err));
        }
        // Valid values get as far as the display check.
        p.start(binary, {"--timeout", "60", "--screenshot", "x.png"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains("no display"));
    }

    void unwritableFolderIsRefusedAndSimulationKeepsRunning() {
        QTemporaryDir dir;
        QFile blocker(dir.filePath("not-a-folder"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        app::MainWindowOptions o;
        o.scene = "synthetic";
        o.persistSettings = false;
        o.factory = [](const std::string&, const std::vector<std::string>&) {
            return std::make_unique<app::SyntheticModel>(8);
        };
        app::MainWindow window(o);
        window.show();
        QTRY_VERIFY(window.worker()->latestFrame());
        QString error;
        QVERIFY(!window.startRecording(blocker.fileName() + "/frames", QSize(64, 64), 5, &error));
        QVERIFY2(error.contains("not-a-folder"), qPrintable(error));
        QVERIFY(window.lastProblem().contains("not-a-folder"));
        QVERIFY(!window.recorder()->isRecording());
        const auto steps = window.worker()->latestFrame()->snapshot->step;
        QTRY_VERIFY(window.worker()->latestFrame()->snapshot->step > steps + 3);
    }

    void failedAttemptDoesNotShowTheOldCountNorOfferReset() {
        // Issue 10, item 7: after a finished recording, a failed start says so in the dock (not
        // "N frames written"), and the status bar offers no "Reset" (it would wipe the scene).
        QTemporaryDir dir;
        app::MainWindowOptions o;
        o.scene = "synthetic";
        o.persistSettings = false;
        o.factory = [](const std::string&, const std::vector<std::string>&) {
            return std::make_unique<app::SyntheticModel>(8);
        };
        app::MainWindow window(o);
        window.show();
        QTRY_VERIFY(window.worker()->latestFrame());
        QVERIFY(window.startRecording(dir.path(), QSize(64, 48), 3));
        QTRY_VERIFY_WITH_TIMEOUT(!window.recorder()->isRecording(), 20000);
        QVERIFY2(window.recordingStatus().contains("3 frames"), qPrintable(window.recordingStatus()));
        QFile blocker(dir.filePath("not-a-folder"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QVERIFY(!window.startRecording(blocker.fileName() + "/frames", QSize(64, 48), 3));
        QVERIFY2(window.recordingStatus().startsWith("Not recording") &&
                     !window.recordingStatus().contains("3 frames"),
                 qPrintable(window.recordingStatus()));
        QVERIFY(!window.lastProblem().isEmpty());
        QVERIFY(!window.resetOffered());
        // Per-frame exports are named by what they hold, then the frame number.
        QCOMPARE(QFileInfo(app::RecordingDock::exportPath(dir.path(), "particles", 5, "ply")).fileName(),
                 QString("particles_000005.ply"));
    }

    void writeFailureStopsRecordingWithMessage() {
        QTemporaryDir dir;
        app::FrameRecorder recorder;
        // failed() comes from the writer thread: collect it queued on this thread (a QSignalSpy
        // would append from the writer thread while we read it here).
        QStringList failed;
        connect(&recorder, &app::FrameRecorder::failed, this, [&](const QString& m) { failed << m; });
        const QString folder = dir.filePath("frames");
        QString error;
        QVERIFY2(recorder.start(folder, QSize(32, 32), 0, &error), qPrintable(error));
        QImage image(32, 32, QImage::Format_RGB32);
        image.fill(Qt::red);
        QVERIFY(recorder.submit(image));
        QTRY_COMPARE(recorder.framesWritten(), 1);
        QVERIFY(QDir(folder).removeRecursively()); // the folder vanishes (unplugged disk)
        QVERIFY(recorder.submit(image));
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY2(failed.at(0).contains("cannot write"), qPrintable(failed.at(0)));
        QVERIFY(!recorder.isRecording());
        QVERIFY(!recorder.submit(image));
        recorder.stop();
    }

    void invalidSizeIsRefused() {
        app::FrameRecorder recorder;
        QString error;
        QVERIFY(!recorder.start(QDir::tempPath(), QSize(4, 4), 1, &error));
        QVERIFY(error.contains("4x4"));
        QVERIFY(!recorder.start(QString(), QSize(64, 64), 1, &error));
    }
};

QTEST_MAIN(TestRecorder)
#include "test_recorder.moc"
