#include "FrameRecorder.h"

#include <QDir>
#include <QFile>
#include <QImageWriter>

namespace octo::app {

namespace {
constexpr size_t kMaxQueued = 24; // ~0.4 s of 60 Hz frames; beyond that drop rather than stall the GUI
}

FrameRecorder::FrameRecorder(QObject* parent) : QObject(parent) {}

FrameRecorder::~FrameRecorder() {
    stop();
}

QString FrameRecorder::framePath(const QString& folder, int index) {
    return QDir(folder).filePath(QString("frame_%1.png").arg(index, 6, 10, QChar('0')));
}

bool FrameRecorder::start(const QString& folder, const QSize& size, int maxFrames, QString* error) {
    stop();
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (folder.isEmpty())
        return fail("choose a folder for the recording first");
    if (size.width() < 16 || size.height() < 16 || size.width() > 8192 || size.height() > 8192)
        return fail(QString("frame size %1x%2 is outside 16..8192").arg(size.width()).arg(size.height()));
    if (!QDir().mkpath(folder))
        return fail("cannot create the recording folder '" + folder + "'");
    // Probe with a real file: permissions, read-only mounts and full disks all show up here.
    QFile probe(QDir(folder).filePath(".octofluid-write-test"));
    if (!probe.open(QIODevice::WriteOnly) || probe.write("ok", 2) != 2 || !probe.flush()) {
        return fail("the recording folder '" + folder + "' is not writable: " + probe.errorString());
    }
    probe.close();
    probe.remove();
    folder_ = folder;
    size_ = size;
    maxFrames_ = std::max(0, maxFrames);
    submitted_ = dropped_ = 0;
    written_ = 0;
    failed_ = false;
    closing_ = false;
    recording_ = true;
    writer_ = std::thread([this] { writerLoop(); });
    return true;
}

void FrameRecorder::stop() {
    const bool wasRecording = recording_.exchange(false);
    {
        std::lock_guard lock(mutex_);
        closing_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable())
        writer_.join();
    if (wasRecording)
        emit finished(written_.load());
}

bool FrameRecorder::submit(const QImage& image) {
    if (!recording_ || failed_ || image.isNull())
        return false;
    if (maxFrames_ > 0 && submitted_ >= maxFrames_)
        return false;
    {
        std::lock_guard lock(mutex_);
        if (queue_.size() >= kMaxQueued) {
            ++dropped_;
            return false;
        }
        queue_.emplace_back(submitted_, image.size() == size_ ? image
                                                              : image.scaled(size_, Qt::IgnoreAspectRatio,
                                                                             Qt::SmoothTransformation));
    }
    ++submitted_;
    cv_.notify_one();
    return true;
}

void FrameRecorder::writerLoop() {
    for (;;) {
        std::pair<int, QImage> job;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
            if (queue_.empty())
                return; // closing and drained
            job = std::move(queue_.front());
            queue_.pop_front();
        }
        if (failed_)
            continue; // drain without writing after a failure
        const QString path = framePath(folder_, job.first);
        QImageWriter writer(path, "png");
        if (!writer.write(job.second)) {
            failed_ = true;
            recording_ = false;
            emit failed("recording stopped: cannot write '" + path + "': " + writer.errorString() +
                        " (disk full or folder not writable?)");
            continue;
        }
        emit frameWritten(++written_);
    }
}

} // namespace octo::app
