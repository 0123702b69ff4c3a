#pragma once
// The native OpenGL window inside the viewport. A QOpenGLWidget is composed into the main
// window's backing store on every paint: under software GL (Mesa llvmpipe) that composition of the
// whole window cost ~90 ms per frame (8–11 frames/s with a trivial paint). A QOpenGLWindow in a
// window container swaps its own buffers instead (90–115 frames/s in the same probe), so the
// ViewportWidget draws through this window and keeps only the widget-side API.
#include <QOpenGLWindow>

namespace octo::app {

class ViewportWidget;

class ViewportSurface : public QOpenGLWindow {
public:
    explicit ViewportSurface(ViewportWidget* owner);

protected:
    void initializeGL() override;
    void resizeGL(int w, int h) override;
    void paintGL() override;
    // Real mouse input arrives here (the native window is on top of the widget); the widget
    // handles it, and also handles events sent to it directly (tests, synthetic input).
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    bool event(QEvent* e) override;

private:
    ViewportWidget* owner_;
};

} // namespace octo::app
