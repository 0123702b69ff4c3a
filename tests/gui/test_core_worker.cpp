// The application driving the real core Simulation: the worker steps the dam break, the
// statistics update, the event loop stays responsive while the solver runs, λmin edits move
// #FPsurface monotonically (when the core publishes it), and one screenshot per scene is saved
// as a test artefact.
#include "GuiTestUtil.h"
#include "gui/MainWindow.h"
#include "gui/StatsPanel.h"
#include "gui/ViewportWidget.h"

#include <QtTest>
#include <algorithm>

using namespace octo;

namespace {
/// The dam break, paused, at a coarse particle radius (quick steps).
app::MainWindowOptions pausedDamBreak(const char* radiusOverride) {
    app::MainWindowOptions o;
    o.scene = "dam-break";
    o.persistSettings = false;
    o.autoPlay = false;
    o.overrides = {radiusOverride};
    return o;
}
} // namespace

class TestCoreWorker : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useCoreProfile(); }

    void damBreakStepsAndWindowStaysResponsive() {
        app::MainWindowOptions o;
        o.scene = "dam-break";
        o.persistSettings = false;
        app::MainWindow window(o);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY_WITH_TIMEOUT(
            window.worker()->latestFrame() && window.worker()->latestFrame()->snapshot->step >= 1, 60000);
        QVERIFY2(window.lastProblem().isEmpty(), qPrintable(window.lastProblem()));
        QTRY_VERIFY(window.statsPanel()->valueText("#FP").toInt() > 1000);
        // While the solver steps the GUI keeps painting the published frames (that a GUI timer is
        // never held up by a step is test_worker_commands' slow-step case; here the gap is only
        // reported: at ~30 ms per step an absolute bound would measure the machine's load).
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0, worstGap = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, [&] {
            worstGap = std::max(worstGap, clock.elapsed() - last);
            last = clock.elapsed();
        });
        const auto stepsBefore = window.worker()->latestFrame()->snapshot->step;
        const auto publishedBefore = window.worker()->latestFrame()->serial;
        QSignalSpy painted(window.viewport(), &app::ViewportWidget::rendered);
        timer.start(10);
        QTest::qWait(2000);
        timer.stop();
        const auto frame = window.worker()->latestFrame();
        qInfo("dam break: %zu particles, %llu steps in 2 s, %.1f ms last step, worst timer gap %lld ms",
              frame->snapshot->positions.size(), (unsigned long long)(frame->snapshot->step - stepsBefore),
              frame->lastStepMs, worstGap);
        window.viewport()->grabFramebuffer().save(QString(OCTO_TEST_OUTPUT_DIR) + "/dam_break_running.png");
        window.grabWindow().save(QString(OCTO_TEST_OUTPUT_DIR) + "/dam_break_window.png");
        // The view paints each published frame: 5 at least, or, when the steps are slower than that
        // (ThreadSanitizer: 400-570 ms per step, 4-5 frames in 2 s), every frame published but the
        // last (it may arrive as the 2 s ends).
        const int published = int(frame->serial - publishedBefore);
        QVERIFY2(
            painted.count() >= std::min(5, published - 1),
            qPrintable(QString("%1 paints in 2 s, %2 frames published").arg(painted.count()).arg(published)));
        QVERIFY(published >= 2);
        QVERIFY2(window.lastProblem().isEmpty(), qPrintable(window.lastProblem()));
        QVERIFY(frame->snapshot->step > stepsBefore);
        QVERIFY(frame->snapshot->time > 0.0);
    }

    void lambdaMinMovesSurfaceCountMonotonically() {
        app::MainWindow window(pausedDamBreak("particleRadius=0.015")); // ~5k particles: quick steps
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame(), 60000);
        QVERIFY2(window.worker()->latestFrame()->snapshot->stat("#FPsurface", -1.0) >= 0.0,
                 "the core snapshot must publish #FPsurface");
        double previous = -1.0;
        for (double lambdaMin : {0.3, 0.6, 0.9}) {
            window.worker()->setParameter("lambdaMin", lambdaMin);
            window.worker()->stepOnce(); // parameters act from the next step on
            QTRY_VERIFY_WITH_TIMEOUT(
                std::abs(window.worker()->latestFrame()->parameters.get("lambdaMin") - lambdaMin) < 1e-12 &&
                    !window.worker()->latestFrame()->playing,
                30000);
            QTest::qWait(200);
            const double count = window.worker()->latestFrame()->snapshot->stat("#FPsurface");
            QVERIFY2(
                count >= previous,
                qPrintable(
                    QString("#FPsurface %1 < %2 at lambdaMin %3").arg(count).arg(previous).arg(lambdaMin)));
            previous = count;
        }
        QVERIFY(previous > 0);
    }

    void surfaceOncePerFrameAndRatesInEveryMode() {
        // Issue 12: the worker publishes after steps, the surface is that of the latest finished
        // frame (time on the 1/fps grid); steps/s and simulated time per wall second are measured
        // in run-until mode (scripted capture) too; a λmin edit never shows a stale surface.
        app::MainWindow window(pausedDamBreak("particleRadius=0.02")); // ~3.5k particles
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame(), 60000);
        window.worker()->runUntilTime(0.2);
        bool sawRates = false, sawOlderSurface = false;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 120000) {
            const auto frame = window.worker()->latestFrame();
            const FrameSnapshot& f = *frame->snapshot;
            QVERIFY(f.surfaceTime >= 0.0 && f.surfaceTime <= f.time + 1e-9);
            const double frames = f.surfaceTime * 60.0;
            QVERIFY2(std::abs(frames - std::round(frames)) < 1e-4,
                     qPrintable(QString("surface time %1 is not on a frame").arg(f.surfaceTime)));
            sawOlderSurface = sawOlderSurface || f.surfaceTime < f.time - 1e-9;
            sawRates = sawRates || (frame->stepsPerSecond > 0.0 && frame->realTimeFactor > 0.0);
            if (!frame->playing && f.time >= 0.2 - 1e-9)
                break;
            QTest::qWait(5);
        }
        QVERIFY2(sawRates, "steps/s and x real time stayed 0 in run-until mode");
        QVERIFY2(sawOlderSurface, "particles are published between frames with the frame's surface");
        QVERIFY(window.worker()->latestFrame()->snapshot->time >= 0.2 - 1e-9);

        window.worker()->setParameter("lambdaMin", 0.3);
        QTRY_VERIFY_WITH_TIMEOUT(
            std::abs(window.worker()->latestFrame()->parameters.get("lambdaMin") - 0.3) < 1e-12, 30000);
        const FrameSnapshot& f = *window.worker()->latestFrame()->snapshot;
        QCOMPARE(f.surfaceFlag.size(), f.positions.size());
        for (size_t i = 0; i < f.positions.size(); ++i)
            QVERIFY2((f.lambda[i] <= 0.3f) == (f.surfaceFlag[i] != 0),
                     "a surface of the old lambdaMin was shown");
    }

    void octreeLeavesOnlyWhileTheOverlayIsOn() {
        // The octree's leaves and the baseline cell counts cost ~10 % of a surface and only the
        // octree overlay and the #Cube comparison read them: the core keeps them while the overlay
        // is on. Switched on while paused, the current frame's octree appears at once.
        app::MainWindow window(pausedDamBreak("particleRadius=0.02")); // ~3.5k particles
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame(), 60000);
        window.worker()->stepOnce();
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame()->snapshot->step >= 1 &&
                                     window.worker()->latestFrame()->snapshot->surfaceSerial > 0,
                                 60000);
        const auto off = window.worker()->latestFrame()->snapshot;
        QVERIFY(off->octreeNodes.empty());
        QVERIFY(off->stat("#Cube(narrow)", -1.0) < 0.0);
        QVERIFY(off->stat("#Cube(octree)", -1.0) > 0.0); // the method's own count stays

        render::RenderSettings s = window.viewport()->settings();
        s.octreeSurface = true;
        window.setRenderSettings(s);
        QTRY_VERIFY_WITH_TIMEOUT(!window.worker()->latestFrame()->snapshot->octreeNodes.empty(), 30000);
        const auto on = window.worker()->latestFrame()->snapshot;
        QCOMPARE(on->step, off->step); // still paused: this frame's octree, rebuilt at once
        QVERIFY(on->stat("#Cube(narrow)", -1.0) >= on->stat("#Cube(octree)"));

        s.octreeSurface = false;
        window.setRenderSettings(s);
        window.worker()->runUntilTime(on->time + 0.02); // past the next frame's end
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame()->snapshot->step > on->step &&
                                     window.worker()->latestFrame()->snapshot->surfaceSerial !=
                                         on->surfaceSerial,
                                 60000);
        QVERIFY(window.worker()->latestFrame()->snapshot->octreeNodes.empty());
    }

    void shippingFactoryRefusesTheTestDouble() {
        // "synthetic" is the GUI tests' SyntheticModel: the application builds only core scenes.
        const app::ModelFactory factory = app::defaultModelFactory();
        QVERIFY_THROWS_EXCEPTION(std::exception, factory("synthetic", {}));
    }

    void screenshotPerScene() {
        // Every built-in scene must load and be captured; the images are artefacts to look at.
        const auto& scenes = app::builtinSceneNames();
        QVERIFY(scenes.size() >= 8);
        QVERIFY(std::find(scenes.begin(), scenes.end(), "synthetic") == scenes.end());
        int saved = 0;
        for (const auto& scene : scenes) {
            app::MainWindowOptions o;
            o.scene = scene;
            o.persistSettings = false;
            o.autoPlay = false;
            app::MainWindow window(o);
            window.resize(1100, 700);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            int code = -1;
            QString message;
            connect(&window, &app::MainWindow::captureFinished, [&](int c, const QString& m) {
                code = c;
                message = m;
            });
            const QString file =
                QString(OCTO_TEST_OUTPUT_DIR) + "/scene_" + QString::fromStdString(scene) + ".png";
            // The initial state: steps per frame vary wildly between scenes and solver settings.
            window.startCapture(file, 0, 1.0 / 60.0, QSize(800, 500), 60.0);
            QTRY_VERIFY_WITH_TIMEOUT(code >= 0, 90000);
            QVERIFY2(code == 0, qPrintable(QString::fromStdString(scene) + ": " + message));
            QImage image(file);
            QCOMPARE(image.size(), QSize(800, 500));
            QVERIFY(test::distinctColors(image) > 10);
            ++saved;
        }
        QCOMPARE(saved, int(scenes.size()));
    }
};

QTEST_MAIN(TestCoreWorker)
#include "test_core_worker.moc"
