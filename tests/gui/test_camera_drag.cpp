// Camera ray math, body picking and the drag plane; and the mouse path from the viewport's
// drag tool through the worker to the (synthetic) model, which moves the body toward the cursor.
#include "GuiTestUtil.h"
#include "gui/MainWindow.h"
#include "render/Picking.h"

#include <QtTest>

using namespace octo;
using render::OrbitCamera;

class TestCameraDrag : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useCoreProfile(); }

    void rayThroughProjectedPointHitsIt() {
        OrbitCamera cam;
        cam.setViewport(800, 600);
        cam.fit(glm::vec3(0), glm::vec3(1, 0.6f, 0.5f));
        cam.orbit(37, -12);
        for (const glm::vec3 p :
             {glm::vec3(0.2f, 0.1f, 0.3f), glm::vec3(0.9f, 0.5f, 0.0f), glm::vec3(0.5f, 0.3f, 0.25f)}) {
            const glm::vec2 px = cam.project(p);
            const render::Ray ray = cam.rayThroughPixel(px.x, px.y);
            QVERIFY(std::abs(glm::length(ray.dir) - 1.0f) < 1e-5f);
            // Distance from p to the ray line is ~0 (float precision of the inverse matrix).
            const glm::vec3 toP = p - ray.origin;
            const float along = glm::dot(toP, ray.dir);
            QVERIFY(along > 0.0f);
            QVERIFY2(glm::length(toP - along * ray.dir) < 1e-4f, "ray misses the projected point");
        }
        // The centre pixel looks straight at the target.
        const render::Ray centre = cam.rayThroughPixel(400, 300);
        QVERIFY(glm::dot(centre.dir, cam.forward()) > 0.99999f);
    }

    void panMovesTargetInViewPlaneAndZoomKeepsIt() {
        OrbitCamera cam;
        cam.setViewport(800, 600);
        cam.fit(glm::vec3(-1), glm::vec3(1));
        const glm::vec3 target = cam.target;
        const glm::vec2 before = cam.project(glm::vec3(0.3f, 0.2f, 0.1f));
        cam.pan(50, 0);
        // Panning right by 50 px moves a point at the target depth ~50 px right on screen.
        QVERIFY(std::abs(glm::dot(cam.target - target, cam.forward())) < 1e-5f);
        const glm::vec2 after = cam.project(glm::vec3(0.3f, 0.2f, 0.1f));
        QVERIFY(std::abs((after.x - before.x) - 50.0f) < 8.0f);
        const float d = cam.distance;
        cam.zoom(2);
        QVERIFY(cam.distance < d);
        cam.orbit(0, 1e6f); // pitch is clamped short of the pole: view matrix stays finite
        QVERIFY(std::isfinite(cam.view()[0][0]));
    }

    void dragPlaneFacesCameraThroughGrabPoint() {
        const glm::vec3 grab(0.5f, 0.2f, 0.1f), normal(0, 0, 1);
        render::DragPlane plane(grab, normal);
        render::Ray ray{glm::vec3(0.7f, 0.4f, 2.0f), glm::vec3(0, 0, -1)};
        const auto hit = plane.intersect(ray);
        QVERIFY(hit.has_value());
        QVERIFY(glm::length(*hit - glm::vec3(0.7f, 0.4f, 0.1f)) < 1e-6f);
        render::Ray away{glm::vec3(0, 0, 2), glm::vec3(0, 0, 1)};
        QVERIFY(!plane.intersect(away).has_value());
        render::Ray parallel{glm::vec3(0, 0, 2), glm::vec3(1, 0, 0)};
        QVERIFY(!plane.intersect(parallel).has_value());
    }

    void pickBodyReturnsNearestHitInBodySpace() {
        auto frame = test::syntheticFrame();
        const BodySnapshot& body = frame->snapshot->bodies.at(0); // 0.12 m box at (0.75, 0.25, 0.25)
        render::Ray ray{glm::vec3(0.75f, 0.25f, 3.0f), glm::vec3(0, 0, -1)};
        const auto hit = render::pickBody(*frame->snapshot, ray);
        QVERIFY(hit.has_value());
        QCOMPARE(hit->bodyId, body.id);
        QVERIFY(std::abs(hit->worldPoint.z - 0.31f) < 1e-5f); // front face at z = 0.25 + 0.06
        QVERIFY(std::abs(hit->bodyPoint.z - 0.06f) < 1e-5f);
        render::Ray miss{glm::vec3(0.2f, 0.25f, 3.0f), glm::vec3(0, 0, -1)};
        QVERIFY(!render::pickBody(*frame->snapshot, miss).has_value());
    }

    void draggerTargetFollowsCursorOnPlane() {
        auto frame = test::syntheticFrame();
        OrbitCamera cam;
        cam.setViewport(640, 480);
        cam.fit(glm::vec3(0), glm::vec3(1, 0.6f, 0.5f));
        const glm::vec2 px = cam.project(glm::vec3(0.75f, 0.25f, 0.25f));
        render::BodyDragger dragger;
        const auto hit = dragger.begin(*frame->snapshot, cam.rayThroughPixel(px.x, px.y), cam.forward());
        QVERIFY(hit.has_value());
        QVERIFY(dragger.active());
        const auto target = dragger.move(cam.rayThroughPixel(px.x + 80, px.y - 40));
        QVERIFY(target.has_value());
        // Same depth along the view direction as the grab point, and it moved right and up.
        QVERIFY(std::abs(glm::dot(*target - hit->worldPoint, cam.forward())) < 1e-4f);
        const glm::vec2 onScreen = cam.project(*target);
        QVERIFY(std::abs(onScreen.x - (px.x + 80)) < 1.0f && std::abs(onScreen.y - (px.y - 40)) < 1.0f);
        dragger.end();
        QVERIFY(!dragger.move(cam.rayThroughPixel(px.x, px.y)).has_value());
    }

    void mouseDragMovesBodyTowardCursor() {
        app::MainWindowOptions options;
        options.scene = "synthetic";
        options.persistSettings = false;
        options.factory = [](const std::string&, const std::vector<std::string>&) {
            return std::make_unique<app::SyntheticModel>(12);
        };
        app::MainWindow window(options);
        window.resize(1000, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.viewport()->frame() && window.viewport()->frame()->snapshot);
        app::ViewportWidget* view = window.viewport();
        view->setTool(app::ViewportWidget::Tool::DragBody);
        QTest::qWait(50);
        const Vec3f start = window.worker()->latestFrame()->snapshot->bodies.at(0).translation;
        const glm::vec2 px = view->camera().project(render::toGlm(start));
        const QPoint from(int(px.x), int(px.y)), to(from + QPoint(-120, -60));
        QTest::mousePress(view, Qt::LeftButton, {}, from);
        for (int i = 1; i <= 6; ++i) {
            QMouseEvent move(QEvent::MouseMove, QPointF(from + (to - from) * i / 6),
                             view->mapToGlobal(QPointF(from + (to - from) * i / 6)), Qt::NoButton,
                             Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view, &move);
            QTest::qWait(20);
        }
        // The body's screen position approaches the cursor while the button is held.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                const auto f = window.worker()->latestFrame();
                const glm::vec2 now =
                    view->camera().project(render::toGlm(f->snapshot->bodies.at(0).translation));
                return glm::length(now - glm::vec2(to.x(), to.y())) <
                       0.3f * glm::length(glm::vec2(to.x() - from.x(), to.y() - from.y()));
            }(),
            3000);
        QTest::mouseRelease(view, Qt::LeftButton, {}, to);
        const Vec3f end = window.worker()->latestFrame()->snapshot->bodies.at(0).translation;
        QVERIFY((end - start).norm() > 0.02f);
    }
};

QTEST_MAIN(TestCameraDrag)
#include "test_camera_drag.moc"
