#pragma once
// Writes numbered PNG frames (frame_000000.png, ...) and frames.csv (frame,time: the simulated
// time of each image) on its own thread so painting never waits for the disk. Nothing is
// dropped: the caller asks canAccept() before rendering the next frame, and the simulation waits
// for the recorder (SimulationWorker's record tap), never the other way round. A take never mixes
// with an older one: an empty or missing folder is used as it is, a non-empty one either gets a
// new numbered sibling (folder-002, ...) or is refused. A write failure (unwritable folder, full
// disk) stops the recording and reports one clear message; the simulation is not affected.
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
    /// What start() does with a folder that already holds files.
    enum class ExistingFolder {
        NewTake, ///< record into the first free sibling folder-002, folder-003, ... (the GUI)
        Refuse   ///< refuse with a message (the command line: scripts expect their folder)
    };

    explicit FrameRecorder(QObject* parent = nullptr);
    ~FrameRecorder() override;

    /// Prepares the take's folder (created if missing) and checks that it is writable. maxFrames =
    /// 0: until stop(). Returns false with a message when recording cannot start; folder() is the
    /// folder actually used.
    bool start(const QString& folder, const QSize& size, int maxFrames, QString* error,
               ExistingFolder existing = ExistingFolder::NewTake);
    /// Stops accepting frames and waits for the queued ones to be written.
    void stop();
    /// Queues one frame (scaled to the recording size if needed) of simulated time `time`. False
    /// when not recording, failed, or maxFrames are queued already. Never drops a frame: ask
    /// canAccept() first.
    bool submit(const QImage& image, double time = -1.0);
    /// Room for another frame: few enough wait for the writer.
    bool canAccept() const;

    bool isRecording() const { return recording_.load(); }
    QSize frameSize() const { return size_; }
    QString folder() const { return folder_; }
    int maxFrames() const { return maxFrames_; }
    int framesSubmitted() const { return submitted_; }
    int framesWritten() const { return written_.load(); }
    static QString framePath(const QString& folder, int index);
    /// The folder a take asked for `folder` goes to: itself when missing or empty, else the first
    /// missing or empty folder-002, folder-003, ...
    static QString takeFolder(const QString& folder);
    /// Why `folder` cannot be created, in words that match the cause (permission denied, read-only
    /// or virtual file system, a file in the way); empty when it can.
    static QString createFolder(const QString& folder);

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
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    struct Job {
        int index = 0;
        double time = -1.0;
        QImage image;
    };
    std::deque<Job> queue_;
    bool closing_ = false;
    std::thread writer_;
};

} // namespace octo::app
