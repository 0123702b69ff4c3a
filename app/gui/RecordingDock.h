#pragma once
// The Recording dock: every simulated frame of the scene (1 / fps of simulated time) exactly
// once, rendered off-screen at the chosen size whatever the GUI's frame rate, as numbered PNGs
// with frames.csv (frame,time) beside them (FrameRecorder); optionally an MP4 encoded by ffmpeg
// when it is installed, the particles (PLY) and the surface mesh (OBJ) per frame. The worker's
// record tap hands over the frames; while the recorder is behind, the simulation waits for it
// (it is never the other way round). Problems are reported through `problem` (never with a reset).
#include "FrameRecorder.h"
#include "SimulationWorker.h"
#include "ViewportWidget.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace octo::app {

class RecordingDock : public QWidget {
    Q_OBJECT
public:
    enum class Format { Png = 0, Mp4 = 1 };

    RecordingDock(FrameRecorder* recorder, ViewportWidget* viewport, SimulationWorker* worker,
                  QWidget* parent = nullptr);

    /// Starts recording the frames simulated from now on (false with a message when it cannot
    /// start; the dock says so). frames = 0: until stopped.
    bool start(const QString& folder, const QSize& size, int frames, QString* error = nullptr,
               FrameRecorder::ExistingFolder existing = FrameRecorder::ExistingFolder::NewTake);
    void stop();
    /// Renders and hands to the writer the frames the worker tapped (called on every GUI poll;
    /// takes only what the writer has room for, so it never waits).
    void pump();
    QString folder() const;
    void setFolder(const QString& folder);
    QString statusText() const;
    void setFormat(Format format);
    Format format() const;
    void setLegend(bool on);
    /// ffmpeg's path, empty when it is not installed.
    static QString ffmpegPath();
    /// Per-frame export names: particles_000005.ply, mesh_000005.obj.
    static QString exportPath(const QString& folder, const QString& what, int index, const QString& ext);

signals:
    void problem(const QString& message);
    void started(const QString& folder);
    /// The take is complete (every frame written and, for MP4, encoded) or failed.
    void done(bool ok, const QString& message);

private:
    void finish(int frames);
    void fail(const QString& message);

    FrameRecorder* recorder_;
    ViewportWidget* viewport_;
    SimulationWorker* worker_;
    QLineEdit* folder_ = nullptr;
    QSpinBox *width_ = nullptr, *height_ = nullptr, *frames_ = nullptr;
    QComboBox* format_ = nullptr;
    QCheckBox *legend_ = nullptr, *particles_ = nullptr, *mesh_ = nullptr;
    QPushButton* button_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    bool failed_ = false;
    bool encoding_ = false;
    double frameSeconds_ = 1.0 / 60.0;
    double lastTime_ = -1.0;
};

} // namespace octo::app
