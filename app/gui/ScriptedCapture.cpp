#include "ScriptedCapture.h"

#include "ViewportWidget.h"

#include <QImage>
#include <QTimer>
#include <algorithm>

namespace octo::app {

ScriptedCapture::ScriptedCapture(SimulationWorker* worker, ViewportWidget* viewport, QObject* parent)
    : QObject(parent), worker_(worker), viewport_(viewport) {
    connect(worker_, &SimulationWorker::targetReached, this, [this] { targetReached_ = true; });
}

void ScriptedCapture::start(const QString& file, int frames, double frameSeconds, QSize size,
                            double timeoutSeconds) {
    active_ = true;
    if (timeoutSeconds > 0.0) {
        QTimer::singleShot(int(timeoutSeconds * 1000.0), this, [this, timeoutSeconds] {
            const auto frame = worker_->latestFrame();
            fail(QString("capture timed out after %1 s at t = %2 s (step %3) of %4 s")
                     .arg(timeoutSeconds)
                     .arg(frame && frame->snapshot ? frame->snapshot->time : 0.0)
                     .arg(frame && frame->snapshot ? qulonglong(frame->snapshot->step) : 0)
                     .arg(time_));
        });
    }
    file_ = file;
    size_ = size;
    time_ = std::max(0, frames) * frameSeconds;
    targetReached_ = false;
    if (frames <= 0) {
        targetReached_ = true;
        worker_->pause();
    } else {
        worker_->runUntilTime(time_);
    }
}

void ScriptedCapture::fail(const QString& message) {
    if (!active_)
        return;
    active_ = false;
    emit finished(1, message);
}

void ScriptedCapture::poll(const PublishedFramePtr& frame) {
    if (!active_ || !targetReached_ || !frame || !frame->snapshot || frame->snapshot->time < time_ - 1e-9)
        return;
    active_ = false;
    const QImage image = size_.isValid() ? viewport_->renderToImage(size_) : viewport_->grabFramebuffer();
    if (image.isNull()) {
        active_ = true;
        return fail("the viewport could not be rendered");
    }
    if (!image.save(file_)) {
        active_ = true;
        return fail("cannot write screenshot '" + file_ + "'");
    }
    emit finished(0, QString("saved %1 (t = %2 s, %3 steps)")
                         .arg(file_)
                         .arg(frame->snapshot->time)
                         .arg(qulonglong(frame->snapshot->step)));
}

} // namespace octo::app
