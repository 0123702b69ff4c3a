// Issue 10's defects a user trips over, driven through the real widgets (synthetic model, so
// each check takes milliseconds): a failed scene load keeps the running scene (2), shortcuts
// work while a number field has focus, Esc leaves it, the wheel edits only focused fields (5),
// typed values outside a parameter's range are clamped with a message naming the range (6),
// the last scene, per-resolution leaf sizes and "Restore defaults" (8), no synthetic scene on
// offer and the Help menu (1, polish); body labels stay inside the view and off each other.
#include "GuiTestUtil.h"
#include "gui/LabelPlacement.h"
#include "gui/MainWindow.h"
#include "gui/ParameterPanel.h"
#include "scene/SceneLibrary.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

using namespace octo;

namespace {
/// Any scene name builds a small synthetic model (the library's scene files are still read by
/// the window for their resolution); "bad" fails like a scene the core cannot build.
app::MainWindowOptions options(bool persist = false, bool autoPlay = true) {
    app::MainWindowOptions o;
    o.scene = "dam-break";
    o.persistSettings = persist;
    o.autoPlay = autoPlay;
    o.factory = [](const std::string& scene,
                   const std::vector<std::string>& overrides) -> std::unique_ptr<app::SimulationModel> {
        if (scene == "bad" || scene.find("broken") != std::string::npos)
            throw std::runtime_error("scene '" + scene + "' could not be built");
        auto m = std::make_unique<app::SyntheticModel>(8);
        m->setStepDelayMs(2);
        for (const auto& o : overrides) {
            ParameterSet probe;
            probe.parseAssignment(o);
            const std::string name = o.substr(0, o.find('='));
            m->setParameter(name, probe.get(name));
        }
        return m;
    };
    return o;
}

bool waitForScene(app::MainWindow& w, const std::string& scene, int ms = 10000) {
    return QTest::qWaitFor(
        [&] {
            const auto f = w.viewport()->frame(); // presented, not only published
            return f && f->scene == scene && f->snapshot;
        },
        ms);
}
} // namespace

class TestUsability : public QObject {
    Q_OBJECT
    QTemporaryDir config_;

private slots:
    void initTestCase() {
        test::useCoreProfile();
        // Settings of these tests live in a temporary folder, never in the user's.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config_.path());
        QSettings::setDefaultFormat(QSettings::NativeFormat);
        QCoreApplication::setOrganizationName("octofluid-test");
        QCoreApplication::setApplicationName("octofluid-test");
    }

    void bodyLabelsStayInsideTheViewAndApart() {
        // A body near the view's right edge had its label cut off ("#0 light box 5..."); bodies
        // close together stacked their labels on each other.
        const QSize view(800, 600);
        const QSizeF label(220, 20);
        const app::PlacedLabel plain = app::placeLabel(QPointF(300, 300), label, view, {});
        QCOMPARE(plain.rect.left(), 310.0); // up and to the right of the body
        QCOMPARE(plain.rect.bottom(), 300.0);
        QCOMPARE(plain.leaderEnd, plain.rect.bottomLeft());
        const app::PlacedLabel right = app::placeLabel(QPointF(700, 300), label, view, {});
        QVERIFY(right.rect.right() <= 700 && right.rect.left() >= 4); // to its left, inside
        QCOMPARE(right.leaderEnd, right.rect.bottomRight());
        const app::PlacedLabel top = app::placeLabel(QPointF(300, 5), label, view, {});
        QVERIFY(top.rect.top() >= 4 && top.rect.top() > 5); // below the body near the top edge
        QCOMPARE(top.leaderEnd, top.rect.topLeft());
        std::vector<QRectF> placed;
        for (int k = 0; k < 4; ++k) // four bodies at one place
            placed.push_back(app::placeLabel(QPointF(400, 300), label, view, placed).rect);
        for (size_t a = 0; a < placed.size(); ++a)
            for (size_t b = a + 1; b < placed.size(); ++b)
                QVERIFY2(!placed[a].intersects(placed[b]),
                         qPrintable(QString("labels %1 and %2 overlap").arg(a).arg(b)));
    }

    void sceneListIsTheLibraryWithoutSynthetic() {
        app::MainWindow w(options());
        auto* combo = w.findChild<QComboBox*>("sceneCombo");
        QVERIFY(combo);
        QStringList names;
        for (int i = 0; i < combo->count(); ++i)
            names << combo->itemText(i);
        QVERIFY(!names.contains("synthetic"));
        QCOMPARE(names.size(), int(SceneLibrary::names().size()));
        QVERIFY(names.contains("dam-break") && names.contains("martin-moyce"));
        QCOMPARE(QDir(app::MainWindow::sceneFolder()).absolutePath(),
                 QDir(QString::fromStdString(sceneDirectory())).absolutePath());
    }

    void comboSelectionLoadsAtOnce() {
        app::MainWindow w(options());
        QVERIFY(waitForScene(w, "dam-break"));
        auto* combo = w.findChild<QComboBox*>("sceneCombo");
        const int tank = combo->findText("tank");
        combo->setCurrentIndex(tank);
        emit combo->activated(tank); // what a click on the item does
        QVERIFY2(waitForScene(w, "tank"), "choosing a scene in the combo box did not load it");
    }

    void failedLoadKeepsTheRunningScene() {
        app::MainWindow w(options());
        w.show();
        QVERIFY(waitForScene(w, "dam-break"));
        // A malformed file: refused before the worker sees it.
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{ \"name\": \"x\", ");
        file.close();
        w.openSceneFile(path);
        QVERIFY2(w.lastProblem().contains("Could not load") && w.lastProblem().contains("broken.json") &&
                     w.lastProblem().contains("still running"),
                 qPrintable(w.lastProblem()));
        QVERIFY(!w.resetOffered()); // a reset would not fix a bad file
        // A scene the model factory cannot build: the worker keeps the old model playing.
        w.loadScene("bad");
        QTRY_VERIFY(w.lastProblem().contains("Could not load bad"));
        QVERIFY(w.worker()->isPlaying());
        const auto before = w.worker()->latestFrame();
        QCOMPARE(before->scene, std::string("dam-break"));
        QTRY_VERIFY(w.worker()->latestFrame()->snapshot->step > before->snapshot->step + 3);
        auto* combo = w.findChild<QComboBox*>("sceneCombo");
        QCOMPARE(combo->currentText(), QString("dam-break"));
    }

    void startSettlingIsAnnouncedUntilTheFirstFrame() {
        // The core builds the scene with its start settling before t = 0 (seconds at fine
        // resolutions, with nothing to show): a line above the view says so until the first frame.
        app::MainWindowOptions o = options(false, false);
        o.factory = {}; // the real simulation
        o.scene.clear();
        o.overrides = {"particleRadius=0.02", "startSettling=0.05"};
        app::MainWindow w(o);
        w.show();
        QCOMPARE(w.settlingText(), QString());
        w.loadScene("dam-break");
        // Shown at once: the GUI thread has not handled a frame since the request.
        QVERIFY2(w.settlingText().startsWith("Settling the start (0.05 s simulated) before t = 0"),
                 qPrintable(w.settlingText()));
        QVERIFY(waitForScene(w, "dam-break", 120000));
        QCOMPARE(w.settlingText(), QString());
        QCOMPARE(w.viewport()->frame()->snapshot->time, 0.0);
        // A reset builds the scene again, with the same settling.
        const uint64_t before = w.viewport()->frame()->serial;
        w.findChild<QAction*>("actReset")->trigger();
        QVERIFY2(w.settlingText().startsWith("Settling the start (0.05 s"), qPrintable(w.settlingText()));
        QTRY_VERIFY_WITH_TIMEOUT(w.viewport()->frame()->serial != before, 120000);
        QTRY_COMPARE(w.settlingText(), QString());
    }

    void shortcutsWorkWhileANumberFieldHasFocus() {
        app::MainWindow w(options(false, false));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(waitForScene(w, "dam-break"));
        auto* spin = qobject_cast<QDoubleSpinBox*>(w.parameterPanel("Solver")->editorFor("viscosity"));
        QVERIFY(spin);
        w.activateWindow();
        spin->setFocus();
        QTRY_VERIFY(spin->hasFocus());
        QVERIFY(!w.worker()->isPlaying());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Space);
        QTRY_VERIFY2(w.worker()->isPlaying(), "Space in a number field did not start the simulation");
        // Esc discards the typed text and hands the keyboard back to the viewport.
        const double value = spin->value();
        QTest::keyClicks(QApplication::focusWidget(), "7");
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Escape);
        QTRY_VERIFY(w.viewport()->hasFocus());
        QCOMPARE(spin->value(), value);
    }

    void wheelEditsOnlyTheFocusedField() {
        app::MainWindow w(options(false, false));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* spin = qobject_cast<QDoubleSpinBox*>(w.parameterPanel("Solver")->editorFor("cflFactor"));
        QVERIFY(spin);
        QCOMPARE(spin->focusPolicy(), Qt::StrongFocus);
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        w.viewport()->setFocus();
        const double before = spin->value();
        auto wheel = [&] {
            const QPointF at(spin->width() / 2, spin->height() / 2);
            QWheelEvent e(at, spin->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
            QApplication::sendEvent(spin, &e);
        };
        wheel();
        QCOMPARE(spin->value(), before); // scrolling past the field leaves it alone
        spin->setFocus();
        QTRY_VERIFY(spin->hasFocus());
        wheel();
        QVERIFY(spin->value() != before);
    }

    void outOfRangeValuesAreClampedWithAMessage() {
        app::MainWindow w(options(false, false));
        QVERIFY(waitForScene(w, "dam-break"));
        app::ParameterPanel* solver = w.parameterPanel("Solver");
        QSignalSpy edited(solver, &app::ParameterPanel::parameterEdited);
        auto type = [](QAbstractSpinBox* box, const QString& text) {
            box->setFocus();
            box->findChild<QLineEdit*>()->selectAll();
            QTest::keyClicks(box, text);
            QTest::keyClick(box, Qt::Key_Return);
        };
        auto* viscosity = qobject_cast<QDoubleSpinBox*>(solver->editorFor("viscosity"));
        type(viscosity, "1000");
        QVERIFY(!edited.isEmpty());
        QCOMPARE(edited.last().at(1).toDouble(), 1.0);
        QVERIFY2(w.lastNotice().contains("1000") && w.lastNotice().contains("[0, 1]"),
                 qPrintable(w.lastNotice()));
        auto* eta = qobject_cast<QDoubleSpinBox*>(solver->editorFor("densityErrorTolerance"));
        type(eta, "1");
        QCOMPARE(edited.last().at(1).toDouble(), 0.1);
        QVERIFY2(w.lastNotice().contains("outside"), qPrintable(w.lastNotice()));
        auto* iterations = qobject_cast<QSpinBox*>(solver->editorFor("maxIterations"));
        type(iterations, "1");
        QCOMPARE(edited.last().at(1).toDouble(), 3.0);
        QCOMPARE(iterations->value(), 3);
        QVERIFY2(w.lastNotice().contains("[3, 1000]"), qPrintable(w.lastNotice()));
        // The worker runs with what the field shows.
        QTRY_COMPARE(w.worker()->latestFrame()->parameters.get("maxIterations"), 3.0);
    }

    void settingsRememberSceneAndKeepLeafSizePerResolution() {
        QSettings().clear();
        {
            app::MainWindowOptions o = options(true, false);
            o.preset = app::ResolutionPreset::Paper;
            app::MainWindow w(o);
            QVERIFY(waitForScene(w, "dam-break"));
            w.parameterPanel("Surface")->editValue("leafSize", 0.02);
            QTRY_COMPARE(w.worker()->latestFrame()->parameters.get("leafSize"), 0.02);
            w.loadScene("cylinder"); // another resolution: the leaf size chosen above does not apply
            QVERIFY(waitForScene(w, "cylinder"));
            QVERIFY(SceneLibrary::load("cylinder").particleRadius !=
                    SceneLibrary::load("dam-break").particleRadius);
            QCOMPARE(w.worker()->latestFrame()->parameters.get("leafSize"), 0.0);
            w.loadScene("dam-break"); // back at the resolution it was chosen for: applied, and said so
            QVERIFY(waitForScene(w, "dam-break"));
            QTRY_COMPARE(w.worker()->latestFrame()->parameters.get("leafSize"), 0.02);
            QVERIFY2(w.lastNotice().contains("Leaf edge"), qPrintable(w.lastNotice()));
            w.loadScene("drop");
            QVERIFY(waitForScene(w, "drop"));
        }
        {
            app::MainWindowOptions o = options(true, false);
            o.restoreLastScene = true; // started without --scene
            app::MainWindow w(o);
            QVERIFY2(waitForScene(w, "drop"), "the last session's scene was not restored");
            QCOMPARE(w.preset(), app::ResolutionPreset::Paper);
            w.loadScene("dam-break");
            QVERIFY(waitForScene(w, "dam-break"));
            QTRY_COMPARE(w.worker()->latestFrame()->parameters.get("leafSize"), 0.02);
            w.findChild<QPushButton*>("restoreDefaults")->click();
            QTRY_VERIFY(w.worker()->latestFrame()->parameters.get("leafSize") == 0.0 &&
                        w.worker()->latestFrame()->scene == "dam-break");
            QVERIFY(QSettings().childGroups().contains("scene"));
            QVERIFY(!QSettings().childGroups().contains("parameters"));
        }
    }

    void helpMenuListsKeysAndCredits() {
        app::MainWindow w(options());
        QStringList menus;
        for (QAction* a : w.menuBar()->actions())
            menus << a->text();
        QVERIFY(menus.contains("&Help"));
        QVERIFY(w.findChild<QAction*>("actKeys"));
    }
};

QTEST_MAIN(TestUsability)
#include "test_usability.moc"
