#pragma once
// Statistics dock: every named value of FrameSnapshot::stats (the paper's Tables 3–4 live)
// and a small plot of the per-step times (Tps, Tode, Tmc) over the last few hundred frames.
#include "sim/FrameSnapshot.h"

#include <QWidget>
#include <deque>

class QTableWidget;

namespace octo::app {

/// A minimal line plot of a few time series (ms), newest on the right.
class TimePlot : public QWidget {
    Q_OBJECT
public:
    explicit TimePlot(QWidget* parent = nullptr);
    void addSample(const std::vector<std::pair<QString, double>>& values);
    void clear();
    int sampleCount() const { return int(history_.size()); }
    QSize sizeHint() const override { return {260, 120}; }

protected:
    void paintEvent(QPaintEvent*) override;

private:
    std::deque<std::vector<std::pair<QString, double>>> history_;
    static constexpr size_t kMaxSamples = 300;
};

class StatsPanel : public QWidget {
    Q_OBJECT
public:
    explicit StatsPanel(QWidget* parent = nullptr);
    /// Shows the snapshot's stats (plus steps/s and step time from the worker).
    /// realTimeFactor: simulated seconds per wall-clock second (< 0: not shown).
    void update(const FrameSnapshot& frame, double stepsPerSecond, double lastStepMs,
                double realTimeFactor = -1.0);
    void clear();
    /// Displayed text for a statistic (tests), empty when absent.
    QString valueText(const QString& name) const;
    TimePlot* plot() const { return plot_; }

private:
    QTableWidget* table_ = nullptr;
    TimePlot* plot_ = nullptr;
};

} // namespace octo::app
