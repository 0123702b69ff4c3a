#include "FrameRecorder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImageWriter>
#include <QTextStream>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace octo::app {

namespace {
constexpr size_t kMaxQueued = 3; // images waiting for the disk; beyond that the caller waits

QString csvPath(const QString& folder) {
    return QDir(folder).filePath("frames.csv");
}

bool isEmptyOrMissing(const QString& folder) {
    const QFileInfo info(folder);
    if (!info.exists())
        return true;
    return info.isDir() &&
           QDir(folder)
               .entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System)
               .isEmpty();
}
} // namespace

FrameRecorder::FrameRecorder(QObject* parent) : QObject(parent) {}

FrameRecorder::~FrameRecorder() {
    stop();
}

QString FrameRecorder::framePath(const QString& folder, int index) {
    return QDir(folder).filePath(QString("frame_%1.png").arg(index, 6, 10, QChar('0')));
}

QString FrameRecorder::takeFolder(const QString& folder) {
    if (isEmptyOrMissing(folder))
        return folder;
    QString base = QDir::cleanPath(folder);
    for (int k = 2; k < 100000; ++k) {
        const QString candidate = base + QString("-%1").arg(k, 3, 10, QChar('0'));
        if (isEmptyOrMissing(candidate))
            return candidate;
    }
    return folder;
}

QString FrameRecorder::createFolder(const QString& folder) {
    const QString path = QDir::cleanPath(QDir(folder).absolutePath());
    // Walk up to the nearest existing ancestor, then create the missing levels one by one, so
    // the message names the level that failed and the real cause.
    QStringList missing;
    QString existing = path;
    while (!QFileInfo::exists(existing)) {
        missing.prepend(QFileInfo(existing).fileName());
        const QString parent = QFileInfo(existing).absolutePath();
        if (parent == existing)
            break;
        existing = parent;
    }
    if (!QFileInfo(existing).isDir())
        return QString("'%1' is a file, not a folder").arg(existing);
    QString current = existing;
    for (const QString& part : missing) {
        const QString parent = current;
        current = QDir(current).filePath(part);
        if (::mkdir(QFile::encodeName(current).constData(), 0777) == 0 || errno == EEXIST)
            continue;
        const int err = errno;
        if (err == EACCES || err == EPERM)
            return QString("permission denied: '%1' may not be written by this user").arg(parent);
        if (err == EROFS)
            return QString("'%1' is on a read-only file system").arg(parent);
        if (err == ENOSPC || err == EDQUOT)
            return QString("no space left on the disk of '%1'").arg(parent);
        if (err == ENOENT || err == ENOTSUP || err == EOPNOTSUPP)
            // /proc, /sys, ...: the parent exists yet refuses new entries.
            return QString("'%1' does not accept new folders (a virtual or read-only file system)")
                .arg(parent);
        return QString("cannot create '%1': %2").arg(current, QString::fromLocal8Bit(std::strerror(err)));
    }
    return {};
}

bool FrameRecorder::start(const QString& folder, const QSize& size, int maxFrames, QString* error,
                          ExistingFolder existing) {
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
    QString take = folder;
    if (!isEmptyOrMissing(folder)) {
        if (QFileInfo(folder).exists() && !QFileInfo(folder).isDir())
            return fail(QString("cannot record into '%1': it is a file, not a folder").arg(folder));
        if (existing == ExistingFolder::Refuse)
            return fail(QString("the recording folder '%1' is not empty: choose a new or empty folder "
                                "(a take never mixes with an older one)")
                            .arg(folder));
        take = takeFolder(folder);
    }
    if (const QString why = createFolder(take); !why.isEmpty())
        return fail("cannot create the recording folder '" + take + "': " + why);
    // Probe with a real file: permissions, read-only mounts and full disks all show up here.
    QFile csv(csvPath(take));
    if (!csv.open(QIODevice::WriteOnly | QIODevice::Truncate) || csv.write("frame,time\n") != 11 ||
        !csv.flush()) {
        const int err = errno;
        return fail("the recording folder '" + take + "' is not writable: " +
                    (err == EACCES || err == EPERM ? QString("permission denied") : csv.errorString()));
    }
    csv.close();
    folder_ = take;
    size_ = size;
    maxFrames_ = std::max(0, maxFrames);
    submitted_ = 0;
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

bool FrameRecorder::canAccept() const {
    if (!recording_ || failed_ || (maxFrames_ > 0 && submitted_ >= maxFrames_))
        return false;
    std::lock_guard lock(mutex_);
    return queue_.size() < kMaxQueued;
}

bool FrameRecorder::submit(const QImage& image, double time) {
    if (!recording_ || failed_ || image.isNull())
        return false;
    if (maxFrames_ > 0 && submitted_ >= maxFrames_)
        return false;
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({submitted_, time,
                          image.size() == size_
                              ? image
                              : image.scaled(size_, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)});
    }
    ++submitted_;
    cv_.notify_one();
    return true;
}

void FrameRecorder::writerLoop() {
    for (;;) {
        Job job;
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
        const QString path = framePath(folder_, job.index);
        QImageWriter writer(path, "png");
        QFile csv(csvPath(folder_));
        QString problem;
        if (!writer.write(job.image))
            problem = "cannot write '" + path + "': " + writer.errorString();
        else if (!csv.open(QIODevice::WriteOnly | QIODevice::Append) ||
                 csv.write(QString("%1,%2\n").arg(job.index).arg(job.time, 0, 'g', 12).toUtf8()) < 0 ||
                 !csv.flush())
            problem = "cannot write '" + csv.fileName() + "': " + csv.errorString();
        if (!problem.isEmpty()) {
            failed_ = true;
            recording_ = false;
            emit failed("recording stopped: " + problem + " (disk full or folder not writable?)");
            continue;
        }
        emit frameWritten(++written_);
    }
}

} // namespace octo::app
