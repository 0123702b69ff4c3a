// The main window starts with a worker; parameter-dock edits reach the worker's command queue
// and are applied at a step boundary; unknown scenes and blow-ups are reported without a
// crash; the event loop stays responsive while steps are slow.
#include "GuiTestUtil.h"
#include "gui/MainWindow.h"
#include "gui/ParameterPanel.h"
#include "gui/StatsPanel.h"

#include <QSlider>
#include <QtTest>

using namespace octo;

namespace {
app::MainWindowOptions syntheticOptions(int stepDelayMs = 0, bool autoPlay = true) {
    app::MainWindowOptions o;
    o.scene = "synthetic";
    o.persistSettings = false;
    o.autoPlay = autoPlay;
    o.factory = [stepDelayMs](const std::string& scene,
                              const std::vector<std::string>&) -> std::unique_ptr<app::SimulationModel> {
        if (scene != "synthetic")
            throw std::runtime_error("unknown scene '" + scene + "'");
        auto m = std::make_unique<app::SyntheticModel>(10);
        m->setStepDelayMs(stepDelayMs);
        return m;
    };
    return o;
}
} // namespace

class TestWorkerCommands : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useCoreProfile(); }

    void panelEditsArePostedToTheQueue() {
        // A worker that is not running keeps the commands: we can inspect exactly what was sent.
        app::SimulationWorker worker([](const std::string&, const std::vector<std::string>&) {
            return std::make_unique<app::SyntheticModel>(4);
        });
        app::ParameterPanel surface("Surface");
        connect(&surface, &app::ParameterPanel::parameterEdited, &worker,
                [&](const QString& n, double v) { worker.setParameter(n.toStdString(), v); });
        auto* slider = qobject_cast<QSlider*>(surface.editorFor("lambdaMin"));
        QVERIFY(slider);
        slider->setValue(400);
        surface.editValue("surfaceMethod", 2);
        const auto pending = worker.commands().pending();
        QCOMPARE(int(pending.size()), 2);
        QCOMPARE(pending[0].type, app::WorkerCommand::Type::SetParameter);
        QCOMPARE(pending[0].text, std::string("lambdaMin"));
        QCOMPARE(pending[0].value, 0.4);
        QCOMPARE(pending[1].text, std::string("surfaceMethod"));
        QCOMPARE(pending[1].value, 2.0);
        // Every parameter of the table has an editor in its group's panel.
        for (const char* group : {"Solver", "Boundary", "Surface"}) {
            app::ParameterPanel panel(group);
            for (const auto& p : parameterTable())
                if (p.group == group)
                    QVERIFY2(panel.editorFor(p.name), p.name.c_str());
        }
    }

    void windowStartsStepsAndAppliesEditsBetweenSteps() {
        app::MainWindow window(syntheticOptions());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.worker()->latestFrame() && window.worker()->latestFrame()->snapshot->step > 5);
        // Statistics dock shows the snapshot's named values.
        QTRY_VERIFY(!window.statsPanel()->valueText("#FP").isEmpty());
        QVERIFY(window.statsPanel()->valueText("#FP").toInt() > 100);
        // Edit λmin through the dock while the worker plays: a later frame carries it and the
        // synthetic surface count follows it (monotone in λmin).
        auto* slider = qobject_cast<QSlider*>(window.parameterPanel("Surface")->editorFor("lambdaMin"));
        QVERIFY(slider);
        double lastCount = -1;
        for (int v : {300, 600, 900}) {
            slider->setValue(v);
            QTRY_VERIFY(std::abs(window.worker()->latestFrame()->parameters.get("lambdaMin") - v / 1000.0) <
                        1e-9);
            QTRY_VERIFY(window.worker()->latestFrame()->snapshot->stat("#FPsurface") > lastCount);
            lastCount = window.worker()->latestFrame()->snapshot->stat("#FPsurface");
        }
        // Pause / single step through the actions.
        window.worker()->pause();
        QTRY_VERIFY(!window.worker()->latestFrame()->playing);
        const auto steps = window.worker()->latestFrame()->snapshot->step;
        window.worker()->stepOnce();
        QTRY_COMPARE(window.worker()->latestFrame()->snapshot->step, steps + 1);
        QTest::qWait(100);
        QCOMPARE(window.worker()->latestFrame()->snapshot->step, steps + 1);
        // An out-of-range value is refused with a message naming it; the worker keeps going.
        window.worker()->setParameter("lambdaMin", 7.0);
        QTRY_VERIFY(window.lastProblem().contains("lambdaMin"));
    }

    void unknownSceneIsReportedNotFatal() {
        app::MainWindow window(syntheticOptions());
        window.show();
        QTRY_VERIFY(window.worker()->latestFrame());
        window.worker()->loadScene("no-such-scene");
        QTRY_VERIFY(window.lastProblem().contains("no-such-scene"));
        window.worker()->loadScene("synthetic");
        window.worker()->play();
        QTRY_VERIFY(window.lastProblem().isEmpty());
        QTRY_VERIFY(window.worker()->latestFrame()->snapshot->step > 3);
    }

    void blowUpPausesAndOffersReset() {
        app::MainWindowOptions o = syntheticOptions();
        o.factory = [](const std::string&,
                       const std::vector<std::string>&) -> std::unique_ptr<app::SimulationModel> {
            auto m = std::make_unique<app::SyntheticModel>(6);
            m->forceProblem("12 particles have NaN/Inf positions or velocities");
            return m;
        };
        app::MainWindow window(o);
        window.show();
        QTRY_VERIFY(window.lastProblem().contains("NaN"));
        QTRY_VERIFY(!window.worker()->isPlaying());
        QTRY_VERIFY(window.worker()->latestFrame() &&
                    !window.worker()->latestFrame()->snapshot->status.empty());
    }

    void eventLoopStaysResponsiveDuringSlowSteps() {
        // 800 ms per step: a GUI that waited for a step would miss its 10 ms timer for >= 800 ms.
        // The bound is half a step, not an absolute latency, so a loaded machine cannot fail it
        // while a GUI that blocks on the solver always does.
        constexpr int kStepMs = 800;
        app::MainWindow window(syntheticOptions(kStepMs));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.worker()->latestFrame() && window.worker()->isPlaying());
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0, worstGap = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, [&] {
            worstGap = std::max(worstGap, clock.elapsed() - last);
            last = clock.elapsed();
        });
        const auto stepsBefore = window.worker()->latestFrame()->snapshot->step;
        timer.start(10);
        QTest::qWait(3 * kStepMs);
        timer.stop();
        qInfo("worst timer gap %lld ms with %d ms steps", worstGap, kStepMs);
        QVERIFY2(worstGap < kStepMs / 2, qPrintable(QString("a 10 ms timer waited %1 ms").arg(worstGap)));
        QTRY_VERIFY(window.worker()->latestFrame()->snapshot->step >= stepsBefore + 2);
    }
};

QTEST_MAIN(TestWorkerCommands)
#include "test_worker_commands.moc"
