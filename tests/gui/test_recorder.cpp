// Recording writes numbered, non-blank PNGs of the chosen size on a background thread; an
// unwritable folder or a failing write stops it with a clear message while the simulation runs.
#include "GuiTestUtil.h"
#include "gui/FrameRecorder.h"
#include "gui/MainWindow.h"
#include "gui/RecordingDock.h"

#include <QImageReader>
#include <QTemporaryDir>
#include <QtTest>

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
