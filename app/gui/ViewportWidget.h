#pragma once
// The central 3D view: draws the latest published frame with the SceneRenderer and turns
// mouse input into camera moves or tool requests (drag a body, stir the fluid). On top of the
// 3D image it paints what a user needs to read it: the colour legend, body labels, the current
// tool and play state, the stir ring and the drag rubber band (also in recordings).
// The GL drawing happens in a native ViewportSurface window embedded in this widget (see there why).
// Sources by job: ViewportWidget.cpp (GL life cycle, paints, off-screen images), ViewportInput.cpp
// (mouse, camera, tools, spawn point), ViewportOverlay.cpp (the 2D marks and the legend).
#include "SimulationWorker.h"
#include "render/Camera.h"
#include "render/Picking.h"
#include "render/RenderSettings.h"
#include "render/SceneRenderer.h"

#include <QElapsedTimer>
#include <QWidget>
#include <optional>

namespace octo::app {

class ViewportSurface;

class ViewportWidget : public QWidget {
    Q_OBJECT
public:
    enum class Tool { Orbit, DragBody, Stir };

    explicit ViewportWidget(QWidget* parent = nullptr);
    ~ViewportWidget() override;

    /// Shows a new frame (repaints). A frame whose container differs from the last framed one
    /// (a new scene) frames the camera.
    void setFrame(PublishedFramePtr frame);
    const PublishedFramePtr& frame() const { return frame_; }

    const render::RenderSettings& settings() const { return settings_; }
    void setSettings(const render::RenderSettings& settings);
    /// The view camera (moved only by the user's orbit, pan and zoom, and by resetCamera()).
    const render::OrbitCamera& camera() const { return camera_; }
    void resetCamera();
    void setTool(Tool tool);
    Tool tool() const { return tool_; }
    /// Stir tool: radius (m) around the cursor ray and strength (core units: 20 m/s^2 each).
    void setStir(float radius, float strength);
    float stirRadius() const { return stirRadius_; }
    float stirStrength() const { return stirStrength_; }
    /// What the viewport tells the user about the tool right now ("" when nothing), e.g. that a
    /// body dragged while paused moves once the simulation runs.
    QString overlayNote() const;
    /// The simulation's speed against the wall clock as the viewport shows it ("slow motion
    /// x0.31"); empty while paused or before a rate is measured.
    QString speedText() const;
    /// Body being dragged (-1: none).
    int draggedBody() const { return dragger_.active() ? dragger_.bodyId() : -1; }

    /// Renders the current frame off-screen at the given pixel size (recording, captures).
    QImage renderToImage(const QSize& size);
    /// Renders a recorded frame off-screen at `size` with the view's camera and look, without the
    /// interface's marks (tool and play badge, body labels, cursor marks); with the colour legend
    /// when `legend`. Uses a renderer of its own, so the live view keeps its buffers.
    QImage renderRecordedFrame(const PublishedFramePtr& frame, const QSize& size, bool legend);
    /// The view as the user sees it (this camera, the widget's size, overlay marks included).
    QImage grabFramebuffer();
    /// Schedules a repaint of the GL view (QWidget::update() repaints only the widget around it),
    /// at most once per display refresh: faster requests are merged.
    void requestPaint();
    /// Paints per second over the last second.
    double framesPerSecond() const { return fps_; }
    /// CPU-side wall time of the last paintGL (ms), incl. uploads; with software GL also the raster work.
    double lastPaintMs() const { return lastPaintMs_; }
    QString glError() const { return glError_; }
    const render::SceneRenderer& renderer() const { return renderer_; }

    /// Where the Bodies dock puts a new body of edge/diameter `size`: above the fluid under the
    /// last cursor position seen in the viewport (the domain's centre when none), inside the domain.
    /// Moves it to a nearby free spot when it would start inside another body (the core refuses that).
    /// `pending`: centres and sizes of bodies asked for but not in a frame yet (kept clear of too).
    Vec3f spawnPoint(float size, const std::vector<std::pair<Vec3f, float>>& pending = {}) const;

signals:
    void dragStarted(int bodyId, const octo::Vec3f& bodyPoint);
    void dragMoved(const octo::Vec3f& worldTarget);
    void dragEnded();
    /// Stir along the ray: a push (zero cursorVelocity) on press and on every new frame while the
    /// held cursor stands still; while it moves, the fluid is dragged along at the cursor's
    /// world velocity at the camera target's depth.
    void stirRequested(const octo::Vec3f& rayOrigin, const octo::Vec3f& rayDir, float radius, float strength,
                       const octo::Vec3f& cursorVelocity);
    void rendered();
    void glFailed(const QString& message);

protected:
    friend class ViewportSurface;
    void initializeGL();
    void resizeGL(int w, int h);
    void paintGL();
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void leaveEvent(QEvent* e) override;

private:
    void cleanupGL();
    /// Waits (processing events, ≤ 10 s) for the embedded window's first paint, which creates the
    /// GL context; false when GL failed or the view is hidden.
    bool ensureGlReady();
    /// Renders at `pixels` with `cam` into an image with the overlay marks at `logical` size.
    QImage renderImage(const QSize& pixels, render::OrbitCamera cam, QSize logical);
    /// Legend, labels, tool/state badge, stir ring, rubber band; `cam` sized to `size` (logical px).
    void paintOverlay(QPainter& painter, const render::OrbitCamera& cam, QSize size) const;
    void paintStatus(QPainter& painter, QSize size) const;
    void paintBodyLabels(QPainter& painter, const render::OrbitCamera& cam, QSize size,
                         const FrameSnapshot& frame) const;
    void paintToolMarks(QPainter& painter, const render::OrbitCamera& cam, QSize size,
                        const FrameSnapshot* frame) const;
    void paintLegend(QPainter& painter, QSize size, const FrameSnapshot* f,
                     const render::SceneRenderer& renderer) const;
    void emitStir(float scale = 1.0f, const Vec3f& cursorVelocity = Vec3f::Zero());
    /// World velocity of the cursor moving from `from` to `to` (pixels) over `seconds`, at the
    /// camera target's depth, capped so a flick stays stable.
    Vec3f cursorVelocity(QPointF from, QPointF to, double seconds) const;

    ViewportSurface* surface_ = nullptr; ///< owned by the window container child
    render::SceneRenderer renderer_;
    std::unique_ptr<render::SceneRenderer> recordRenderer_; ///< recorded frames (created on first use)
    render::OrbitCamera camera_;
    render::RenderSettings settings_;
    render::BodyDragger dragger_;
    PublishedFramePtr frame_;
    Tool tool_ = Tool::Orbit;
    Aabb framedDomain_; ///< container the camera was last framed on
    float stirRadius_ = 0.1f, stirStrength_ = 15.0f;
    QPointF stirPos_;
    QElapsedTimer stirMoveClock_; ///< since the last stir move (a held, still cursor pushes)
    uint64_t stirStep_ = 0;       ///< step of the last stir push
    glm::vec3 dragBodyPoint_{0.0f}, dragTarget_{0.0f}; ///< grab point (body space), cursor target
    bool cameraTouched_ = false;                       ///< orbit/pan/zoom since the last resetCamera()
    bool glReady_ = false;
    bool octreeRepaintQueued_ = false; ///< a paint is scheduled for outlines being built
    QString glError_;
    QPoint lastMouse_;
    std::optional<QPointF> hover_; ///< last cursor position over the viewport
    Qt::MouseButton activeButton_ = Qt::NoButton;
    bool stirring_ = false;
    QElapsedTimer paintClock_; ///< since the last paint started (requestPaint's display-rate cap)
    bool paintQueued_ = false;
    QElapsedTimer missClock_; ///< since a drag-tool press that hit no body
    QElapsedTimer fpsClock_;
    int fpsCount_ = 0;
    double fps_ = 0.0;
    double lastPaintMs_ = 0.0;
    static constexpr double kMaxPaintDuty = 0.25; ///< share of the time paints may take (requestPaint)
};

} // namespace octo::app
