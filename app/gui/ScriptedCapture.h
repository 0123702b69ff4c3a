#pragma once
// The command line's scripted capture (--screenshot): run the simulation to a time, save the
// viewport, report success or the first failure (scene error, blow-up, GL failure, unwritable
// file, timeout) exactly once, so the program always exits with a code and a message.
#include "SimulationWorker.h"

#include <QObject>
#include <QSize>
#include <QString>

namespace octo::app {

class ViewportWidget;

class ScriptedCapture : public QObject {
    Q_OBJECT
public:
    ScriptedCapture(SimulationWorker* worker, ViewportWidget* viewport, QObject* parent);

    /// Runs until `frames` frames of frameSeconds have been simulated, then saves the viewport to
    /// `file` (at `size` if valid, else the viewport's). frames = 0 captures the first frame.
    /// Fails when the time is not reached within timeoutSeconds (0: never).
    void start(const QString& file, int frames, double frameSeconds, QSize size, double timeoutSeconds);
    /// Ends a running capture with exit code 1 and `message` (no-op when none runs).
    void fail(const QString& message);
    /// Called with the frame on screen (every GUI poll): saves the image once the target time is
    /// shown.
    void poll(const PublishedFramePtr& shownFrame);
    bool active() const { return active_; }

signals:
    void finished(int exitCode, const QString& message);

private:
    SimulationWorker* worker_;
    ViewportWidget* viewport_;
    bool active_ = false;
    bool targetReached_ = false;
    QString file_;
    double time_ = 0.0;
    QSize size_;
};

} // namespace octo::app
