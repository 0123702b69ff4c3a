#include "ViewportSurface.h"

#include "ViewportWidget.h"

#include <QMouseEvent>
#include <QWidget>
#include <algorithm>

namespace octo::app {

ViewportSurface::ViewportSurface(ViewportWidget* owner) : owner_(owner) {
    // Keyboard focus stays in the widget tree: the window's shortcuts and the docks' focus rules
    // (InputPolicy) see every key; a click focuses the ViewportWidget instead.
    setFlag(Qt::WindowDoesNotAcceptFocus);
    // QPainter fills curved and antialiased paths (the stir ring, rounded plates) through the
    // stencil buffer; QOpenGLWidget's framebuffer had one, a window must ask for it.
    QSurfaceFormat format = QSurfaceFormat::defaultFormat();
    format.setDepthBufferSize(std::max(format.depthBufferSize(), 24));
    format.setStencilBufferSize(std::max(format.stencilBufferSize(), 8));
    setFormat(format);
}

void ViewportSurface::initializeGL() {
    owner_->initializeGL();
}

void ViewportSurface::resizeGL(int w, int h) {
    owner_->resizeGL(w, h);
}

void ViewportSurface::paintGL() {
    owner_->paintGL();
}

void ViewportSurface::mousePressEvent(QMouseEvent* e) {
    // A click in the native child must activate the main window (X would otherwise leave the
    // keyboard with no active Qt window, and the window's shortcuts would not fire).
    owner_->window()->activateWindow();
    owner_->setFocus(Qt::MouseFocusReason);
    owner_->mousePressEvent(e);
}

void ViewportSurface::mouseMoveEvent(QMouseEvent* e) {
    owner_->mouseMoveEvent(e);
}

void ViewportSurface::mouseReleaseEvent(QMouseEvent* e) {
    owner_->mouseReleaseEvent(e);
}

void ViewportSurface::wheelEvent(QWheelEvent* e) {
    owner_->wheelEvent(e);
}

bool ViewportSurface::event(QEvent* e) {
    if (e->type() == QEvent::Leave)
        owner_->leaveEvent(e);
    return QOpenGLWindow::event(e);
}

} // namespace octo::app
