// The mouse tools and the Bodies dock on the REAL core (scene dam-break-bodies, coarse r so a
// step takes milliseconds): the "Drag body" tool picks a body under the cursor, the worker hands
// the drag to Simulation::beginDrag/setDragTarget, and the body's grab point closes in on the
// cursor target; the dock adds a body above the fluid and deletes the selected one.
// Skipped when the app was built without the core Simulation.
#include "GuiTestUtil.h"
#include "gui/MainWindow.h"
#include "rigid/RigidBodySystem.h"

#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

using namespace octo;

namespace {
/// r = 2 cm: ~2.3 k fluid particles, bodies (0.14 m) stay thicker than the core's 4 r minimum.
const std::vector<std::string> kCoarse{"particleRadius=0.02"};

Vec3f grabPointWorld(const BodySnapshot& b, const Vec3f& bodyPoint) {
    return b.rotation * bodyPoint + b.translation;
}

const BodySnapshot* findBody(const FrameSnapshot& f, int id) {
    for (const auto& b : f.bodies)
        if (b.id == id)
            return &b;
    return nullptr;
}

void sendMove(QWidget* view, QPoint at) {
    QMouseEvent move(QEvent::MouseMove, QPointF(at), view->mapToGlobal(QPointF(at)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &move);
}
} // namespace

class TestCoreDrag : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useCoreProfile(); }

    void mouseDragPullsBodyTowardCursor() {
        app::MainWindowOptions o;
        o.scene = "dam-break-bodies";
        o.overrides = kCoarse;
        o.persistSettings = false;
        app::MainWindow window(o);
        window.resize(1000, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame() && window.worker()->latestFrame()->snapshot &&
                                     window.worker()->latestFrame()->snapshot->bodies.size() == 3,
                                 60000);
        QVERIFY(window.worker()->latestFrame()->dragSupported);
        app::ViewportWidget* view = window.viewport();
        view->setTool(app::ViewportWidget::Tool::DragBody);
        QTest::qWait(100);

        // Press on the light box (the first body): its centre projects inside its silhouette.
        const auto first = window.worker()->latestFrame();
        const Vec3f centre = first->snapshot->bodies.at(0).translation;
        const glm::vec2 px = view->camera().project(render::toGlm(centre));
        // The cursor goes to where the point 0.25 m above and 0.2 m behind the body is seen: the
        // target on the camera-facing drag plane stays inside the container.
        const glm::vec2 goal =
            view->camera().project(render::toGlm(Vec3f(centre + Vec3f(0.2f, 0.25f, 0.1f))));
        const QPoint from(int(px.x), int(px.y)), to(int(goal.x), int(goal.y));
        QSignalSpy started(view, &app::ViewportWidget::dragStarted);
        QSignalSpy moved(view, &app::ViewportWidget::dragMoved);
        QTest::mousePress(view, Qt::LeftButton, {}, from);
        QCOMPARE(started.count(), 1);
        const int id = started.at(0).at(0).toInt();
        const Vec3f bodyPoint = started.at(0).at(1).value<Vec3f>();
        for (int i = 1; i <= 6; ++i) {
            sendMove(view, from + (to - from) * i / 6);
            QTest::qWait(20);
        }
        QVERIFY(moved.count() >= 2);
        const Vec3f target = moved.last().at(0).value<Vec3f>();

        const Aabb& d = first->snapshot->domain;
        QVERIFY2((target.array() > d.min.array()).all() && (target.array() < d.max.array()).all(),
                 qPrintable(QString("the cursor target (%1 %2 %3) should lie inside the container")
                                .arg(target.x())
                                .arg(target.y())
                                .arg(target.z())));
        const BodySnapshot* atStart = findBody(*first->snapshot, id);
        QVERIFY(atStart);
        const float startDistance = (grabPointWorld(*atStart, bodyPoint) - target).norm();
        QVERIFY2(startDistance > 0.08f, qPrintable(QString("target only %1 m away").arg(startDistance)));

        // While the button is held the grab point closes in on the target (spring toward it).
        float distance = startDistance;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 30000 && distance > 0.3f * startDistance) {
            QTest::qWait(100);
            const auto f = window.worker()->latestFrame();
            if (const BodySnapshot* b = findBody(*f->snapshot, id))
                distance = (grabPointWorld(*b, bodyPoint) - target).norm();
        }
        const auto held = window.worker()->latestFrame();
        qInfo("body %d: grab point %.3f m -> %.3f m from the target (%.2f %.2f %.2f) in %lld ms (t = %.3f s, "
              "%llu steps)",
              id, startDistance, distance, target.x(), target.y(), target.z(), clock.elapsed(),
              held->snapshot->time, (unsigned long long)held->snapshot->step);
        QVERIFY2(distance < 0.3f * startDistance,
                 qPrintable(QString("grab point still %1 m from the target (was %2 m)")
                                .arg(distance)
                                .arg(startDistance)));
        QTest::mouseRelease(view, Qt::LeftButton, {}, to);
        QVERIFY2(window.lastProblem().isEmpty(), qPrintable(window.lastProblem()));
        // The grabbed point was lifted toward the (higher) target, against gravity.
        const BodySnapshot* after = findBody(*held->snapshot, id);
        QVERIFY(after);
        QVERIFY(grabPointWorld(*after, bodyPoint).y() > grabPointWorld(*atStart, bodyPoint).y() + 0.05f);
    }

    void dragFollowsInWallTimeAtTheInteractivePreset() {
        // Issue 27, 4: the drag response is in wall time. At the Interactive preset (about 9 k
        // particles) the simulation runs at a few per cent of real time on this machine. The wall
        // time a body needs is its simulated time over the real-time factor, which the machine's
        // load sets, so the two factors are checked apart: the response follows the measured
        // factor, and in simulated time the body closes the gap as fast as the drag's speed limit
        // allows (with the old fixed 0.04 s of simulated time it took many seconds of wall time).
        app::MainWindowOptions o;
        o.scene = "dam-break-bodies";
        o.persistSettings = false;
        app::MainWindow window(o);
        window.resize(1000, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        app::ViewportWidget* view = window.viewport();
        // The viewport's own frame too: it takes the worker's frames on its next paint, and the
        // press below is aimed at what the view shows (reading view->frame() before it had one
        // crashed the test, ~1 run in 10).
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame() && window.worker()->latestFrame()->snapshot &&
                                     window.worker()->latestFrame()->snapshot->bodies.size() == 3 &&
                                     window.worker()->latestFrame()->realTimeFactor > 0.0 && view->frame() &&
                                     view->frame()->snapshot && view->frame()->snapshot->bodies.size() == 3,
                                 120000);
        view->setTool(app::ViewportWidget::Tool::DragBody);
        // The heavy box (#2) sits still on the floor; press on it in the frame the view shows.
        const auto first = view->frame();
        const Vec3f centre = first->snapshot->bodies.at(2).translation;
        const glm::vec2 px = view->camera().project(render::toGlm(centre));
        const glm::vec2 goal = view->camera().project(render::toGlm(Vec3f(centre + Vec3f(0.0f, 0.2f, 0.0f))));
        const QPoint from(int(px.x), int(px.y)), to(int(goal.x), int(goal.y));
        QSignalSpy started(view, &app::ViewportWidget::dragStarted);
        QSignalSpy moved(view, &app::ViewportWidget::dragMoved);
        QTest::mousePress(view, Qt::LeftButton, {}, from);
        QCOMPARE(started.count(), 1);
        const int id = started.at(0).at(0).toInt();
        const Vec3f bodyPoint = started.at(0).at(1).value<Vec3f>();
        sendMove(view, to);
        QVERIFY(moved.count() >= 1);
        const Vec3f target = moved.last().at(0).value<Vec3f>();
        const float startDistance =
            (grabPointWorld(*findBody(*first->snapshot, id), bodyPoint) - target).norm();
        QVERIFY2(startDistance > 0.08f, qPrintable(QString("target only %1 m away").arg(startDistance)));
        const double simStart = window.worker()->latestFrame()->snapshot->time;
        QElapsedTimer clock;
        clock.start();
        float distance = startDistance;
        // The worker scales the response with the real-time factor it measures; the frames carry
        // that factor with a delay, so the largest one seen during the drag bounds what it used.
        double fastest = window.worker()->latestFrame()->realTimeFactor;
        while (clock.elapsed() < 20000 && distance > 0.3f * startDistance) {
            QTest::qWait(50);
            fastest = std::max(fastest, window.worker()->latestFrame()->realTimeFactor);
            if (const BodySnapshot* b = findBody(*window.worker()->latestFrame()->snapshot, id))
                distance = (grabPointWorld(*b, bodyPoint) - target).norm();
        }
        const double seconds = clock.elapsed() / 1000.0;
        const auto held = window.worker()->latestFrame();
        qInfo("drag at %.3fx real time: 70 %% of %.3f m closed in %.2f s of wall time (simulated response "
              "%.4f s)",
              held->realTimeFactor, startDistance, seconds, window.worker()->dragSimResponse());
        QTest::mouseRelease(view, Qt::LeftButton, {}, to);
        // The spring's simulated response was scaled to the measured speed (0.2 s of wall time).
        QVERIFY(window.worker()->dragSimResponse() > 0.0);
        const double response = window.worker()->dragSimResponse();
        fastest = std::max(fastest, window.worker()->latestFrame()->realTimeFactor);
        QVERIFY2(response <= 0.2 * std::max(fastest, 0.025) + 1e-9,
                 qPrintable(QString("response %1 s, fastest factor %2").arg(response).arg(fastest)));
        QVERIFY2(distance <= 0.3f * startDistance,
                 qPrintable(
                     QString("%1 m left of %2 m after %3 s").arg(distance).arg(startDistance).arg(seconds)));
        // In simulated time: 70 % of the gap at the speed limit, plus getting up to speed (half a
        // response), the response scaled up to its 0.2 s of wall time at the fastest factor seen,
        // and two frames of snapshot delay. About 1 s of wall time on a quiet machine (0.05x);
        // with both cores busy elsewhere (0.01x) the limit alone needs 4 s (3.6-5.5 s measured).
        const double simSeconds = held->snapshot->time - simStart;
        const double bound =
            0.7 * startDistance / DragSettings{}.maxSpeed + 0.2 * std::max(fastest, 0.025) + 2.0 / 60.0;
        qInfo("simulated: %.4f s (bound %.4f s)", simSeconds, bound);
        QVERIFY2(simSeconds <= bound,
                 qPrintable(QString("%1 s simulated to close 70 %, bound %2 s").arg(simSeconds).arg(bound)));
        QVERIFY2(window.lastProblem().isEmpty(), qPrintable(window.lastProblem()));
    }

    void bodiesDockAddsAndDeletes() {
        app::MainWindowOptions o;
        o.scene = "dam-break-bodies";
        o.overrides = kCoarse;
        o.persistSettings = false;
        o.autoPlay = false;
        app::MainWindow window(o);
        window.resize(1000, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame() && window.worker()->latestFrame()->snapshot &&
                                     window.worker()->latestFrame()->snapshot->bodies.size() == 3,
                                 60000);
        auto* list = window.findChild<QListWidget*>("bodiesList");
        QVERIFY(list);
        QTRY_COMPARE(list->count(), 3);
        for (const char* shape : {"sphere", "box", "cylinder", "armadillo"}) {
            auto* add = window.findChild<QPushButton*>(QString("add-%1").arg(shape));
            QVERIFY(add);
            QTRY_VERIFY(add->isEnabled());
            const int before = list->count();
            add->click();
            QTRY_COMPARE_WITH_TIMEOUT(list->count(), before + 1, 20000);
            QVERIFY2(window.lastProblem().isEmpty(), qPrintable(window.lastProblem()));
        }
        // The new bodies sit inside the container, above the fluid.
        const auto f = window.worker()->latestFrame();
        const Aabb& d = f->snapshot->domain;
        float fluidTop = d.min.y();
        for (const Vec3f& p : f->snapshot->positions)
            fluidTop = std::max(fluidTop, p.y());
        for (size_t i = 3; i < f->snapshot->bodies.size(); ++i) {
            const Vec3f& c = f->snapshot->bodies[i].translation;
            QVERIFY((c.array() > d.min.array()).all() && (c.array() < d.max.array()).all());
            QVERIFY(c.y() > fluidTop);
        }
        // Delete the selected (first) body.
        const int removedId = list->item(0)->data(Qt::UserRole).toInt();
        list->setCurrentRow(0);
        window.findChild<QPushButton*>("deleteBody")->click();
        QTRY_COMPARE_WITH_TIMEOUT(list->count(), 6, 20000);
        QVERIFY(!findBody(*window.worker()->latestFrame()->snapshot, removedId));
        // And the simulation still steps with the new bodies.
        const auto step = window.worker()->latestFrame()->snapshot->step;
        window.worker()->stepOnce();
        QTRY_VERIFY_WITH_TIMEOUT(window.worker()->latestFrame()->snapshot->step > step, 20000);
        QVERIFY2(window.lastProblem().isEmpty(), qPrintable(window.lastProblem()));
    }
};

QTEST_MAIN(TestCoreDrag)
#include "test_core_drag.moc"
