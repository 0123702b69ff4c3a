// The viewport renders a synthetic snapshot; the surface-particle and octree overlays change
// the image and turning them off restores it; unchanged data is not re-uploaded.
#include "GuiTestUtil.h"
#include "gui/ViewportWidget.h"

#include <QtTest>

using namespace octo;

class TestViewportOverlays : public QObject {
    Q_OBJECT
    app::ViewportWidget* view_ = nullptr;

    QImage grab() {
        view_->requestPaint();
        return view_->grabFramebuffer();
    }
    /// What the X server shows in the window (the native GL window's swapped buffer), not an
    /// off-screen render.
    QImage screenImage() {
        QSignalSpy painted(view_, &app::ViewportWidget::rendered);
        view_->requestPaint();
        if (!painted.wait(3000))
            return {};
        // Let the swap reach the X server: under load (ctest -j2 beside the physics tests) 100 ms
        // was not always enough, so wait until two grabs 100 ms apart agree (at most 3 s).
        auto grabScreen = [&] {
            return view_->screen()
                ->grabWindow(view_->winId())
                .toImage()
                .convertToFormat(QImage::Format_RGB32);
        };
        QTest::qWait(100);
        QImage image = grabScreen();
        for (int attempt = 0; attempt < 30; ++attempt) {
            QTest::qWait(100);
            QImage again = grabScreen();
            if (again == image)
                break;
            image = again;
        }
        return image;
    }

private slots:
    void initTestCase() {
        test::useCoreProfile();
        view_ = new app::ViewportWidget;
        view_->resize(480, 360);
        view_->show();
        QVERIFY(QTest::qWaitForWindowExposed(view_));
        view_->setFrame(test::syntheticFrame());
        QVERIFY2(view_->glError().isEmpty(), qPrintable(view_->glError()));
        render::RenderSettings s;
        s.showMesh = false; // the overlays are about particles and boxes
        s.showParticles = true;
        s.shading = render::Shading::Diagnostic; // plain background: pixel counts measure the overlays
        s.showLegend = false;
        s.colorMode = render::ColorMode::Uniform;
        view_->setSettings(s);
    }
    void cleanupTestCase() { delete view_; }

    void rendersSomething() {
        const QImage image = grab();
        QCOMPARE(image.size(), view_->size() * view_->devicePixelRatio());
        QVERIFY2(test::distinctColors(image) > 10, "the viewport looks blank");
        image.save(QString(OCTO_TEST_OUTPUT_DIR) + "/viewport_synthetic.png");
    }

    void surfaceOverlayChangesImageAndOffRestores() {
        const QImage base = grab();
        render::RenderSettings s = view_->settings();
        s.highlightSurface = true;
        view_->setSettings(s);
        const QImage highlighted = grab();
        highlighted.save(QString(OCTO_TEST_OUTPUT_DIR) + "/viewport_surface_particles.png");
        // The synthetic top layer and walls are surface particles: a large visible area changes.
        QVERIFY2(test::differingPixels(base, highlighted) > 2000,
                 qPrintable(QString("only %1 pixels changed").arg(test::differingPixels(base, highlighted))));
        s.highlightSurface = false;
        view_->setSettings(s);
        QCOMPARE(test::differingPixels(base, grab()), 0);
    }

    void octreeOverlayChangesImageAndOffRestores() {
        const QImage base = grab();
        render::RenderSettings s = view_->settings();
        s.octreeSurface = s.octreeInterior = s.octreeExterior = true;
        view_->setSettings(s);
        const QImage boxes = grab();
        boxes.save(QString(OCTO_TEST_OUTPUT_DIR) + "/viewport_octree.png");
        QVERIFY(test::differingPixels(base, boxes) > 500);
        // The synthetic octree is an 8x5x4 lattice of equal cells: each shared edge is drawn once and
        // edges inside the block (4 cells around them) not at all: 8*6*5 + 5*9*5 + 4*9*6 = 681 edges,
        // less 8*4*3 + 5*7*3 + 4*7*4 = 313 inside, instead of 12 per cell (1920).
        QCOMPARE(view_->renderer().octreeEdgeCount(), 681 - 313);
        // Only the surface class: fewer lines than all three classes, but still some.
        s.octreeInterior = s.octreeExterior = false;
        view_->setSettings(s);
        const QImage surfaceOnly = grab();
        QVERIFY(test::differingPixels(base, surfaceOnly) > 100);
        QVERIFY(test::differingPixels(base, surfaceOnly) < test::differingPixels(base, boxes));
        // Only the surface nodes' edges are in the buffer: the 4x2x4 surface cells, 170 edges less 42 inside.
        QCOMPARE(view_->renderer().octreeEdgeCount(),
                 4 * 3 * 5 + 2 * 5 * 5 + 4 * 5 * 3 - (4 * 3 + 2 * 9 + 4 * 3));
        // Depth filter excluding every node (synthetic nodes sit at depth 3) draws nothing.
        s.octreeMinDepth = 4;
        view_->setSettings(s);
        QCOMPARE(test::differingPixels(base, grab()), 0);
        QCOMPARE(view_->renderer().octreeEdgeCount(), 0);
        s.octreeMinDepth = 0;
        s.octreeSurface = false;
        view_->setSettings(s);
        QCOMPARE(test::differingPixels(base, grab()), 0);
    }

    void surfaceParticlesAloneWithFluidParticlesHidden() {
        // Issue 10, item 9 (paper Fig. 5b): hiding the fluid particles and showing the surface
        // ones draws the surface particles alone, in the highlight colour.
        render::RenderSettings s = view_->settings();
        s.showParticles = false;
        s.highlightSurface = false;
        view_->setSettings(s);
        const QImage empty = grab();
        s.highlightSurface = true;
        view_->setSettings(s);
        const QImage alone = grab();
        alone.save(QString(OCTO_TEST_OUTPUT_DIR) + "/viewport_surface_alone.png");
        QVERIFY2(test::differingPixels(empty, alone) > 2000,
                 qPrintable(QString("%1 pixels").arg(test::differingPixels(empty, alone))));
        s.highlightSurface = false;
        s.showParticles = true;
        view_->setSettings(s);
    }

    void octreeUploadedOncePerRebuildOrFilterEdit() {
        render::RenderSettings s = view_->settings();
        s.octreeSurface = s.octreeInterior = true;
        view_->setSettings(s);
        grab();
        const int first = view_->renderer().uploads().octree;
        QVERIFY(first >= 1);
        QVERIFY(view_->renderer().octreeDepthRange().second >= view_->renderer().octreeDepthRange().first);
        // Depth cueing runs in the shader: no upload; repainting does not upload either.
        s.octreeDepthCue = false;
        view_->setSettings(s);
        grab();
        grab();
        QCOMPARE(view_->renderer().uploads().octree, first);
        // The class and depth filter run on the CPU, once per edit (a frame draws only shown edges).
        s.octreeExterior = true;
        s.octreeMinDepth = 1;
        view_->setSettings(s);
        grab();
        grab();
        QCOMPARE(view_->renderer().uploads().octree, first + 1);
        // A new snapshot with the same nodes (between two surface rebuilds): no upload either.
        auto copy = std::make_shared<app::PublishedFrame>(*view_->frame());
        auto snapshot = std::make_shared<FrameSnapshot>(*copy->snapshot);
        snapshot->positions[0].x() += 1e-4f;
        copy->snapshot = snapshot;
        copy->serial += 1;
        view_->setFrame(copy);
        grab();
        QCOMPARE(view_->renderer().uploads().octree, first + 1);
        // Nodes that changed (a rebuild): uploaded once.
        auto rebuilt = std::make_shared<FrameSnapshot>(*snapshot);
        rebuilt->octreeNodes.pop_back();
        rebuilt->surfaceSerial += 1; // every rebuild has its own serial
        copy = std::make_shared<app::PublishedFrame>(*copy);
        copy->snapshot = rebuilt;
        view_->setFrame(copy);
        grab();
        grab();
        QCOMPARE(view_->renderer().uploads().octree, first + 2);
        s = view_->settings();
        s.octreeSurface = s.octreeInterior = s.octreeExterior = false;
        s.octreeMinDepth = 0;
        s.octreeDepthCue = true;
        view_->setSettings(s);
    }

    void togglingOverlaysDoesNotReuploadParticles() {
        grab();
        const auto before = view_->renderer().uploads();
        render::RenderSettings s = view_->settings();
        s.octreeSurface = true;
        view_->setSettings(s);
        grab();
        s.octreeSurface = false;
        view_->setSettings(s);
        grab();
        const auto after = view_->renderer().uploads();
        QCOMPARE(after.positions, before.positions);
        QCOMPARE(after.surfaceMesh, before.surfaceMesh);
        QCOMPARE(after.bodyMeshes, before.bodyMeshes);
        // A new snapshot uploads positions once, body shapes (shared) not at all.
        view_->setFrame(test::syntheticFrame());
        grab();
        grab();
        QCOMPARE(view_->renderer().uploads().positions, before.positions + 1);
        QCOMPARE(view_->renderer().uploads().bodyMeshes,
                 before.bodyMeshes + 1); // new model → new mesh object
    }

    void surfaceMeshUploadedOncePerSurface() {
        // Snapshots arrive every solver step, the surface once per frame: a snapshot that carries
        // the same surface (same serial) must not send the mesh to the GPU again.
        auto withSurface = [&](uint64_t serial, float nudge) {
            auto copy = std::make_shared<app::PublishedFrame>(*view_->frame());
            auto snapshot = std::make_shared<FrameSnapshot>(*copy->snapshot);
            snapshot->positions[0].x() += nudge;
            snapshot->surfaceSerial = serial;
            copy->snapshot = snapshot;
            copy->serial += 1;
            view_->setFrame(copy);
            grab();
        };
        QVERIFY(!view_->frame()->snapshot->surfaceMesh.triangles.empty());
        withSurface(1000001, 1e-4f);
        const int first = view_->renderer().uploads().surfaceMesh;
        const int positions = view_->renderer().uploads().positions;
        withSurface(1000001, 1e-4f); // newer particles, same surface
        QCOMPARE(view_->renderer().uploads().surfaceMesh, first);
        QCOMPARE(view_->renderer().uploads().positions, positions + 1);
        withSurface(1000002, 1e-4f); // a rebuilt surface
        QCOMPARE(view_->renderer().uploads().surfaceMesh, first + 1);
    }

    void liveViewPicksUpOctreeOutlinesBuiltInTheBackground() {
        // The live paint never waits for the outline build: it draws the old outlines, then
        // paints again by itself until the new ones are up (no grab, no new frame needed).
        render::RenderSettings s = view_->settings();
        s.octreeSurface = s.octreeInterior = s.octreeExterior = true;
        view_->setSettings(s);
        grab();
        const int all = view_->renderer().octreeEdgeCount();
        QVERIFY(all > 0);
        auto copy = std::make_shared<app::PublishedFrame>(*view_->frame());
        auto rebuilt = std::make_shared<FrameSnapshot>(*copy->snapshot);
        rebuilt->octreeNodes.resize(rebuilt->octreeNodes.size() / 2);
        rebuilt->surfaceSerial += 1;
        copy->snapshot = rebuilt;
        view_->setFrame(copy);
        QTRY_VERIFY_WITH_TIMEOUT(view_->renderer().octreeEdgeCount() != all, 5000);
        QVERIFY(!view_->renderer().octreePending());
        const int live = view_->renderer().octreeEdgeCount();
        grab(); // an off-screen render of the same state builds nothing new
        QCOMPARE(view_->renderer().octreeEdgeCount(), live);
        s.octreeSurface = s.octreeInterior = s.octreeExterior = false;
        view_->setSettings(s);
    }

    void stirRingIsARingOnScreen() {
        // QPainter fills curves through the stencil buffer: without one in the window's format
        // the stir ring showed as a filled white square around the cursor.
        const QImage before = screenImage();
        view_->setTool(app::ViewportWidget::Tool::Stir);
        const QPoint at(view_->width() / 2, view_->height() / 2);
        QMouseEvent hover(QEvent::MouseMove, QPointF(at), view_->mapToGlobal(QPointF(at)), Qt::NoButton,
                          Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(view_, &hover);
        const QImage ring = screenImage();
        view_->setTool(app::ViewportWidget::Tool::Orbit);
        ring.save(QString(OCTO_TEST_OUTPUT_DIR) + "/viewport_stir_ring.png");
        const render::OrbitCamera& cam = view_->camera();
        const float radius = view_->stirRadius() / (cam.distance * std::tan(0.5f * cam.fovYRad)) * 0.5f *
                             float(view_->height());
        QVERIFY(radius > 8.0f);
        const int changed = test::differingPixels(before, ring, 24);
        const double disc = 3.14159 * radius * radius;
        QVERIFY2(changed > 20 && changed < 0.5 * disc,
                 qPrintable(QString("%1 pixels changed, the disc is %2").arg(changed).arg(disc)));
        // Halfway between the centre dot and the ring the view is untouched.
        const QPoint inside = at + QPoint(int(0.5f * radius), 0);
        QCOMPARE(ring.pixel(inside), before.pixel(inside));
    }

    void offscreenRenderHasRequestedSize() {
        const QImage image = view_->renderToImage(QSize(320, 200));
        QCOMPARE(image.size(), QSize(320, 200));
        QVERIFY(test::distinctColors(image) > 10);
    }

    void offscreenRenderIsUprightLikeTheViewport() {
        // Recording and captures use the off-screen path: same camera and size as the widget
        // must give the widget's image, not a vertically mirrored one (GL rows start at the bottom).
        const QImage onScreen = screenImage();
        QVERIFY(!onScreen.isNull());
        onScreen.save(QString(OCTO_TEST_OUTPUT_DIR) + "/viewport_on_screen.png");
        QVERIFY2(test::distinctColors(onScreen) > 10, "the window shows nothing");
        const QImage offScreen = view_->grabFramebuffer();
        QCOMPARE(offScreen.size(), onScreen.size());
        const QImage mirrored = offScreen.mirrored(false, true);
        const int upright =
            test::differingPixels(onScreen, offScreen.convertToFormat(QImage::Format_RGB32), 24);
        const int flipped = test::differingPixels(onScreen, mirrored, 24);
        QVERIFY2(upright < flipped / 4,
                 qPrintable(QString("%1 pixels differ upright, %2 mirrored").arg(upright).arg(flipped)));
    }
};

QTEST_MAIN(TestViewportOverlays)
#include "test_viewport_overlays.moc"
