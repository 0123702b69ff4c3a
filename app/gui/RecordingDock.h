#pragma once
// The Recording dock: numbered PNG frames of what the viewport shows (FrameRecorder on its own
// thread), optionally the particles (PLY) and the surface mesh (OBJ) per frame, and an offer to
// encode the frames with ffmpeg. Problems are reported through `problem` (never with a reset).
#include "FrameRecorder.h"
#include "SimulationWorker.h"
#include "ViewportWidget.h"

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace octo::app {

class RecordingDock : public QWidget {
    Q_OBJECT
public:
    RecordingDock(FrameRecorder* recorder, ViewportWidget* viewport, SimulationWorker* worker,
                  QWidget* parent = nullptr);

    /// Starts recording (false with a message when it cannot start; the dock says so).
    bool start(const QString& folder, const QSize& size, int frames, QString* error = nullptr);
    void stop();
    /// Records the frame the viewport shows now (called for every presented frame).
    void recordFrame();
    QString folder() const;
    void setFolder(const QString& folder);
    QString statusText() const;
    /// The ffmpeg question after a recording (off in captures and tests).
    void setOfferEncoding(bool on) { offerEncoding_ = on; }
    /// Per-frame export names: particles_000005.ply, mesh_000005.obj.
    static QString exportPath(const QString& folder, const QString& what, int index, const QString& ext);

signals:
    void problem(const QString& message);
    void started(const QString& folder);

private:
    void finish(int frames);

    FrameRecorder* recorder_;
    ViewportWidget* viewport_;
    SimulationWorker* worker_;
    QLineEdit* folder_ = nullptr;
    QSpinBox *width_ = nullptr, *height_ = nullptr, *frames_ = nullptr;
    QCheckBox *particles_ = nullptr, *mesh_ = nullptr;
    QPushButton* button_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    bool offerEncoding_ = true;
    bool failed_ = false;
};

} // namespace octo::app
