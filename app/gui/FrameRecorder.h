#pragma once
// Writes numbered PNG frames (frame_000000.png, ...) on its own thread so painting never waits
// for the disk. A write failure (unwritable folder, full disk) stops the recording and reports
// one clear message; the simulation is not affected.
#include <QImage>
#include <QObject>
#include <QSize>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace octo::app {

class FrameRecorder : public QObject {
    Q_OBJECT
public:
    explicit FrameRecorder(QObject* parent = nullptr);
    ~FrameRecorder() override;

    /// Prepares the folder (created if missing) and checks that it is writable. maxFrames = 0:
    /// until stop(). Returns false with a message when recording cannot start.
    bool start(const QString& folder, const QSize& size, int maxFrames, QString* error);
    /// Stops accepting frames and waits for the queued ones to be written.
    void stop();
    /// Queues one frame (scaled to the recording size if needed). False when not recording or
    /// when the writer is too far behind (the frame is dropped and counted).
    bool submit(const QImage& image);

    bool isRecording() const { return recording_.load(); }
    QSize frameSize() const { return size_; }
    QString folder() const { return folder_; }
    int maxFrames() const { return maxFrames_; }
    int framesSubmitted() const { return submitted_; }
    int framesWritten() const { return written_.load(); }
    int framesDropped() const { return dropped_; }
    static QString framePath(const QString& folder, int index);

signals:
    void frameWritten(int count);
    void failed(const QString& message);
    void finished(int frames);

private:
    void writerLoop();

    std::atomic<bool> recording_{false};
    std::atomic<bool> failed_{false};
    std::atomic<int> written_{0};
    QString folder_;
    QSize size_;
    int maxFrames_ = 0;
    int submitted_ = 0;
    int dropped_ = 0;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::pair<int, QImage>> queue_;
    bool closing_ = false;
    std::thread writer_;
};

} // namespace octo::app
