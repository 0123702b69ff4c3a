#include "RecordingDock.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <algorithm>
#include <cmath>

namespace octo::app {

// The dock's form, row by row; long because each control is connected where it is placed.
RecordingDock::RecordingDock(FrameRecorder* recorder, ViewportWidget* viewport, SimulationWorker* worker,
                             QWidget* parent)
    : QWidget(parent), recorder_(recorder), viewport_(viewport), worker_(worker) {
    setObjectName("panel_Recording");
    auto* form = new QFormLayout(this);
    folder_ = new QLineEdit(QDir::home().filePath("octofluid-frames"), this);
    folder_->setObjectName("recordFolder");
    folder_->setToolTip("A folder that holds files already gets a new numbered sibling (name-002, ...): "
                        "a take never mixes with an older one");
    auto* browse = new QPushButton("...", this);
    browse->setMaximumWidth(32);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, "Recording folder", folder_->text());
        if (!dir.isEmpty())
            folder_->setText(dir);
    });
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder_);
    folderRow->addWidget(browse);
    form->addRow("Folder", folderRow);
    width_ = new QSpinBox(this);
    height_ = new QSpinBox(this);
    width_->setRange(16, 8192);
    height_->setRange(16, 8192);
    width_->setValue(1280);
    height_->setValue(720);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(width_);
    sizeRow->addWidget(new QLabel("x", this));
    sizeRow->addWidget(height_);
    form->addRow("Size (px)", sizeRow);
    frames_ = new QSpinBox(this);
    frames_->setRange(0, 1000000);
    frames_->setSpecialValueText("until stopped");
    frames_->setToolTip("Simulated frames to record (1 / fps of the scene each)");
    form->addRow("Frames", frames_);
    format_ = new QComboBox(this);
    format_->setObjectName("recordFormat");
    format_->addItem("PNG frames");
    format_->addItem("MP4 (ffmpeg) + PNG frames");
    format_->setToolTip("MP4 needs ffmpeg (apt-get install ffmpeg); the PNGs are kept beside it");
    form->addRow("Format", format_);
    legend_ = new QCheckBox("Colour legend in the images", this);
    legend_->setObjectName("recordLegend");
    particles_ = new QCheckBox("Particles (PLY) per frame", this);
    mesh_ = new QCheckBox("Surface mesh (OBJ) per frame", this);
    form->addRow(legend_);
    form->addRow(particles_);
    form->addRow(mesh_);
    button_ = new QPushButton("Start recording", this);
    button_->setObjectName("recordButton");
    connect(button_, &QPushButton::clicked, this, [this] {
        if (recorder_->isRecording())
            stop();
        else
            start(folder_->text(), QSize(width_->value(), height_->value()), frames_->value());
    });
    form->addRow(button_);
    progress_ = new QProgressBar(this);
    progress_->setVisible(false);
    form->addRow(progress_);
    status_ = new QLabel("Not recording", this);
    status_->setObjectName("recordStatus");
    status_->setWordWrap(true);
    form->addRow(status_);

    connect(recorder_, &FrameRecorder::failed, this, [this](const QString& m) {
        const int written = recorder_->framesWritten();
        fail(QString("%1 (%2 frames written before the error)").arg(m).arg(written));
    });
    connect(recorder_, &FrameRecorder::frameWritten, this, [this](int n) {
        if (!recorder_->isRecording() || failed_)
            return; // late signals of a stopped or failed recording must not overwrite its status
        status_->setText(QString("%1 frames written to %2 (t = %3 s)")
                             .arg(n)
                             .arg(recorder_->folder())
                             .arg(lastTime_, 0, 'f', 3));
        if (recorder_->maxFrames() > 0) {
            progress_->setValue(n);
            if (n >= recorder_->maxFrames())
                stop();
        }
    });
}

QString RecordingDock::folder() const {
    return folder_->text();
}

void RecordingDock::setFolder(const QString& folder) {
    folder_->setText(folder);
}

QString RecordingDock::statusText() const {
    return status_->text();
}

void RecordingDock::setFormat(Format format) {
    format_->setCurrentIndex(int(format));
}

RecordingDock::Format RecordingDock::format() const {
    return Format(format_->currentIndex());
}

void RecordingDock::setLegend(bool on) {
    legend_->setChecked(on);
}

QString RecordingDock::ffmpegPath() {
    return QStandardPaths::findExecutable("ffmpeg");
}

QString RecordingDock::exportPath(const QString& folder, const QString& what, int index, const QString& ext) {
    return QDir(folder).filePath(QString("%1_%2.%3").arg(what).arg(index, 6, 10, QChar('0')).arg(ext));
}

bool RecordingDock::start(const QString& folder, const QSize& size, int frames, QString* error,
                          FrameRecorder::ExistingFolder existing) {
    QString message;
    bool ok = true;
    if (encoding_) {
        message = "the previous take is still being encoded to MP4; wait for it";
        ok = false;
    } else if (format() == Format::Mp4 && ffmpegPath().isEmpty()) {
        message = "MP4 needs ffmpeg, which is not installed (apt-get install ffmpeg); choose PNG frames, "
                  "which need nothing else";
        ok = false;
    } else {
        ok = recorder_->start(folder, size, frames, &message, existing);
    }
    if (!ok) {
        status_->setText("Not recording: " + message);
        if (error)
            *error = message;
        emit problem(message);
        return false;
    }
    failed_ = false;
    lastTime_ = -1.0;
    if (const auto frame = worker_->latestFrame())
        frameSeconds_ = frame->frameSeconds;
    RecordTapOptions tap;
    tap.maxFrames = frames;
    tap.folder = recorder_->folder().toStdString();
    tap.particles = particles_->isChecked();
    tap.mesh = mesh_->isChecked();
    worker_->openRecordTap(tap);
    folder_->setText(folder);
    button_->setText("Stop recording");
    progress_->setVisible(frames > 0);
    progress_->setRange(0, std::max(frames, 1));
    progress_->setValue(0);
    const bool moved = QDir::cleanPath(recorder_->folder()) != QDir::cleanPath(folder);
    status_->setText(QString("Recording every simulated frame (%1 fps of simulated time) to %2%3")
                         .arg(1.0 / frameSeconds_, 0, 'g', 4)
                         .arg(recorder_->folder())
                         .arg(moved ? " (the folder asked for holds an older take)" : ""));
    emit started(recorder_->folder());
    return true;
}

void RecordingDock::pump() {
    if (!recorder_->isRecording() || failed_)
        return;
    // At most two frames per GUI tick: the view stays responsive; the simulation waits meanwhile.
    for (int k = 0; k < 2 && recorder_->canAccept(); ++k) {
        std::optional<RecordedFrame> recorded = worker_->takeRecordedFrame();
        if (!recorded)
            break;
        const QImage image =
            viewport_->renderRecordedFrame(recorded->frame, recorder_->frameSize(), legend_->isChecked());
        if (image.isNull())
            return fail("recording stopped: the frame could not be rendered off-screen (OpenGL)");
        lastTime_ = recorded->frame->snapshot->time;
        frameSeconds_ = recorded->frame->frameSeconds;
        recorder_->submit(image, lastTime_);
    }
    if (recorder_->maxFrames() > 0 && recorder_->framesSubmitted() >= recorder_->maxFrames())
        worker_->closeRecordTap(); // the simulation goes on at its own pace
}

void RecordingDock::fail(const QString& message) {
    failed_ = true;
    worker_->closeRecordTap();
    recorder_->stop();
    button_->setText("Start recording");
    progress_->setVisible(false);
    status_->setText(message);
    emit problem(message);
    emit done(false, message);
}

void RecordingDock::stop() {
    const bool was = recorder_->isRecording();
    worker_->closeRecordTap();
    recorder_->stop();
    button_->setText("Start recording");
    progress_->setVisible(false);
    if (was && !failed_)
        finish(recorder_->framesWritten());
}

void RecordingDock::finish(int frames) {
    const QString folder = recorder_->folder();
    const QString summary =
        QString("Recorded %1 frames (%2 fps of simulated time) to %3, times in frames.csv")
            .arg(frames)
            .arg(1.0 / frameSeconds_, 0, 'g', 4)
            .arg(folder);
    status_->setText(summary);
    if (format() != Format::Mp4 || frames < 1) {
        emit done(true, summary);
        return;
    }
    const QString ffmpeg = ffmpegPath();
    if (ffmpeg.isEmpty()) {
        const QString m = summary + "; no MP4: ffmpeg is not installed (apt-get install ffmpeg)";
        status_->setText(m);
        emit done(false, m);
        return;
    }
    const QString out = QDir(folder).filePath("octofluid.mp4");
    status_->setText(summary + "; encoding " + out + " with ffmpeg ...");
    encoding_ = true;
    auto* process = new QProcess(this);
    connect(process, &QProcess::finished, this, [this, process, out, summary](int code) {
        encoding_ = false;
        const bool ok = code == 0 && QFileInfo::exists(out);
        const QString m =
            ok ? summary + "; wrote " + out
               : summary + "; ffmpeg failed: " +
                     QString::fromLocal8Bit(process->readAllStandardError()).trimmed().right(300);
        status_->setText(m);
        process->deleteLater();
        if (!ok)
            emit problem(m);
        emit done(ok, m);
    });
    connect(process, &QProcess::errorOccurred, this, [this, process, summary](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart)
            return;
        encoding_ = false;
        const QString m = summary + "; ffmpeg could not be started: " + process->errorString();
        status_->setText(m);
        process->deleteLater();
        emit problem(m);
        emit done(false, m);
    });
    const QString rate = QString::number(1.0 / frameSeconds_, 'g', 8);
    process->start(ffmpeg, {"-y", "-loglevel", "error", "-framerate", rate, "-i",
                            QDir(folder).filePath("frame_%06d.png"), "-c:v", "libx264", "-pix_fmt", "yuv420p",
                            "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", out});
}

} // namespace octo::app
