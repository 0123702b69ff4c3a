#include "StatsPanel.h"

#include <QHeaderView>
#include <QPainter>
#include <QPainterPath>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace octo::app {

namespace {
/// Value of the first statistic named `prefix` or `prefix <unit>` ("Tps" matches "Tps ms").
double statByPrefix(const FrameSnapshot& f, const std::string& prefix, double fallback) {
    for (const auto& [n, v] : f.stats)
        if (n == prefix ||
            (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 && n[prefix.size()] == ' '))
            return v;
    return fallback;
}
} // namespace

TimePlot::TimePlot(QWidget* parent) : QWidget(parent) {
    setObjectName("timePlot");
    setMinimumHeight(90);
}

void TimePlot::addSample(const std::vector<std::pair<QString, double>>& values) {
    history_.push_back(values);
    while (history_.size() > kMaxSamples)
        history_.pop_front();
    QWidget::update();
}

void TimePlot::clear() {
    history_.clear();
    QWidget::update();
}

void TimePlot::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), QColor(24, 26, 32));
    if (history_.empty())
        return;
    double top = 1e-6;
    for (const auto& s : history_)
        for (const auto& [n, v] : s)
            if (std::isfinite(v))
                top = std::max(top, v);
    if (top <= 1e-6)
        return; // nothing measured yet
    top *= 1.1;
    const QColor colors[] = {QColor(90, 170, 255), QColor(255, 150, 60), QColor(120, 220, 120),
                             QColor(220, 120, 220)};
    const size_t series = history_.back().size();
    const double dx = double(width() - 1) / double(std::max<size_t>(kMaxSamples - 1, 1));
    const double x0 = double(width() - 1) - dx * double(history_.size() - 1);
    for (size_t k = 0; k < series; ++k) {
        QPainterPath path;
        for (size_t i = 0; i < history_.size(); ++i) {
            const double v = k < history_[i].size() ? history_[i][k].second : 0.0;
            const QPointF pt(x0 + dx * double(i),
                             height() - 1 - (height() - 16) * std::clamp(v / top, 0.0, 1.0));
            i ? path.lineTo(pt) : path.moveTo(pt);
        }
        p.setPen(QPen(colors[k % 4], 1.5));
        p.drawPath(path);
        p.drawText(6 + int(k) * 70, 12, history_.back()[k].first);
    }
    p.setPen(QColor(180, 180, 180));
    p.drawText(rect().adjusted(0, 0, -4, 0), Qt::AlignRight | Qt::AlignTop,
               QString("%1 ms").arg(top, 0, 'g', 3));
}

StatsPanel::StatsPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("panel_Statistics");
    auto* layout = new QVBoxLayout(this);
    table_ = new QTableWidget(0, 2, this);
    table_->setObjectName("statsTable");
    table_->setHorizontalHeaderLabels({"Statistic", "Value"});
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(table_, 1);
    plot_ = new TimePlot(this);
    layout->addWidget(plot_);
}

void StatsPanel::clear() {
    table_->setRowCount(0);
    plot_->clear();
}

void StatsPanel::update(const FrameSnapshot& f, double stepsPerSecond, double lastStepMs,
                        double realTimeFactor) {
    std::vector<std::pair<QString, QString>> rows;
    rows.emplace_back("t (s)", QString::number(f.time, 'f', 4));
    rows.emplace_back("step", QString::number(qulonglong(f.step)));
    // The surface is rebuilt once per simulated frame: the mesh and flags are of this time.
    if (f.surfaceTime >= 0.0)
        rows.emplace_back("surface frame t (s)", QString::number(f.surfaceTime, 'f', 4));
    rows.emplace_back("steps/s", QString::number(stepsPerSecond, 'f', 1));
    if (realTimeFactor >= 0.0)
        rows.emplace_back("x real time", QString::number(realTimeFactor, 'g', 3));
    rows.emplace_back("step wall time (ms)", QString::number(lastStepMs, 'f', 2));
    for (const auto& [name, value] : f.stats) {
        const bool count = !name.empty() && name[0] == '#';
        rows.emplace_back(QString::fromStdString(name), count
                                                            ? QString::number(qlonglong(std::llround(value)))
                                                            : QString::number(value, 'g', 4));
    }
    // Shares of the step: the paper's point is that Tode + Tmc stay small against Tps.
    // Tode and Tmc are per frame (one surface per frame): compare with the frame's physics.
    const double tpsFrame = f.stat("Tps frame ms", -1.0);
    const double tps = tpsFrame > 0 ? tpsFrame : statByPrefix(f, "Tps", -1),
                 tode = statByPrefix(f, "Tode", -1), tmc = statByPrefix(f, "Tmc", -1);
    if (tps > 0 && tode >= 0 && tmc >= 0) {
        const double total = tps + tode + tmc;
        rows.emplace_back("Tode share", QString::number(100.0 * tode / total, 'f', 1) + " %");
        rows.emplace_back("Tmc share", QString::number(100.0 * tmc / total, 'f', 1) + " %");
    }
    table_->setRowCount(int(rows.size()));
    for (int r = 0; r < int(rows.size()); ++r) {
        for (int c = 0; c < 2; ++c) {
            QTableWidgetItem* item = table_->item(r, c);
            if (!item)
                table_->setItem(r, c, item = new QTableWidgetItem);
            item->setText(c == 0 ? rows[size_t(r)].first : rows[size_t(r)].second);
        }
    }
    std::vector<std::pair<QString, double>> sample;
    for (const char* name : {"Tps", "Tode", "Tmc"}) {
        const double v = std::string(name) == "Tps" && tpsFrame > 0 ? tpsFrame : statByPrefix(f, name, -1.0);
        if (v >= 0.0)
            sample.emplace_back(name, v);
    }
    if (!sample.empty())
        plot_->addSample(sample);
}

QString StatsPanel::valueText(const QString& name) const {
    for (int r = 0; r < table_->rowCount(); ++r)
        if (table_->item(r, 0) && table_->item(r, 0)->text() == name)
            return table_->item(r, 1)->text();
    return {};
}

} // namespace octo::app
