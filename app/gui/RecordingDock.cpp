#include "RecordingDock.h"

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <algorithm>

namespace octo::app {

RecordingDock::RecordingDock(FrameRecorder* recorder, ViewportWidget* viewport, SimulationWorker* worker,
                             QWidget* parent)
    : QWidget(parent), recorder_(recorder), viewport_(viewport), worker_(worker) {
    setObjectName("panel_Recording");
    auto* form = new QFormLayout(this);
    folder_ = new QLineEdit(QDir::home().filePath("octofluid-frames"), this);
    folder_->setObjectName("recordFolder");
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
    form->addRow("Frames", frames_);
    particles_ = new QCheckBox("Particles (PLY) per frame", this);
    mesh_ = new QCheckBox("Surface mesh (OBJ) per frame", this);
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
        failed_ = true;
        const int written = recorder_->framesWritten();
        recorder_->stop();
        button_->setText("Start recording");
        progress_->setVisible(false);
        status_->setText(QString("%1 (%2 frames written before the error)").arg(m).arg(written));
        emit problem(m);
    });
    connect(recorder_, &FrameRecorder::frameWritten, this, [this](int n) {
        if (!recorder_->isRecording() || failed_)
            return; // late signals of a stopped or failed recording must not overwrite its status
        status_->setText(QString("%1 frames written to %2").arg(n).arg(recorder_->folder()));
        if (recorder_->maxFrames() > 0)
            progress_->setValue(n);
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

QString RecordingDock::exportPath(const QString& folder, const QString& what, int index, const QString& ext) {
    return QDir(folder).filePath(QString("%1_%2.%3").arg(what).arg(index, 6, 10, QChar('0')).arg(ext));
}

bool RecordingDock::start(const QString& folder, const QSize& size, int frames, QString* error) {
    QString message;
    if (!recorder_->start(folder, size, frames, &message)) {
        status_->setText("Not recording: " + message);
        if (error)
            *error = message;
        emit problem(message);
        return false;
    }
    failed_ = false;
    folder_->setText(folder);
    button_->setText("Stop recording");
    progress_->setVisible(frames > 0);
    progress_->setRange(0, std::max(frames, 1));
    progress_->setValue(0);
    status_->setText("Recording to " + folder);
    emit started(folder);
    return true;
}

void RecordingDock::stop() {
    const bool was = recorder_->isRecording();
    recorder_->stop();
    button_->setText("Start recording");
    progress_->setVisible(false);
    if (was && !failed_)
        finish(recorder_->framesWritten());
}

void RecordingDock::recordFrame() {
    if (!recorder_->isRecording())
        return;
    const int index = recorder_->framesSubmitted();
    const QImage image = viewport_->renderToImage(recorder_->frameSize());
    if (!recorder_->submit(image)) {
        if (recorder_->maxFrames() > 0 && recorder_->framesSubmitted() >= recorder_->maxFrames())
            stop();
        return;
    }
    const std::pair<QCheckBox*, std::pair<WorkerCommand::Type, QString>> exports[] = {
        {particles_, {WorkerCommand::Type::ExportParticles, "particles.ply"}},
        {mesh_, {WorkerCommand::Type::ExportMesh, "mesh.obj"}}};
    for (const auto& [check, what] : exports) {
        if (!check->isChecked())
            continue;
        WorkerCommand c;
        c.type = what.first;
        const QStringList nameExt = what.second.split('.');
        c.text = exportPath(recorder_->folder(), nameExt[0], index, nameExt[1]).toStdString();
        worker_->post(c);
    }
}

void RecordingDock::finish(int frames) {
    status_->setText(QString("Recorded %1 frames to %2").arg(frames).arg(recorder_->folder()));
    const QString ffmpeg = QStandardPaths::findExecutable("ffmpeg");
    if (ffmpeg.isEmpty() || frames < 2 || !offerEncoding_ || !isVisible() ||
        qEnvironmentVariableIsSet("OCTO_NO_DIALOGS"))
        return;
    if (QMessageBox::question(this, "Encode video",
                              QString("Encode the %1 frames into an MP4 with ffmpeg?").arg(frames)) !=
        QMessageBox::Yes)
        return;
    const QString out = QDir(recorder_->folder()).filePath("octofluid.mp4");
    auto* process = new QProcess(this);
    connect(process, &QProcess::finished, this, [this, process, out](int code) {
        status_->setText(code == 0 ? "Wrote " + out : "ffmpeg failed: " + process->readAllStandardError());
        process->deleteLater();
    });
    process->start(ffmpeg,
                   {"-y", "-framerate", "30", "-i", QDir(recorder_->folder()).filePath("frame_%06d.png"),
                    "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", out});
}

} // namespace octo::app
