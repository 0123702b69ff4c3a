#pragma once
// Shared helpers of the GUI tests: GL format, synthetic frames, image comparison.
#include "gui/SimulationWorker.h"
#include "gui/SyntheticModel.h"

#include <QImage>
#include <QSurfaceFormat>
#include <cmath>

namespace octo::test {

inline void useCoreProfile() {
    QSurfaceFormat format;
    format.setVersion(3, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);
    format.setDepthBufferSize(24);
    QSurfaceFormat::setDefaultFormat(format);
}

/// A published frame of the synthetic model (what the worker would hand the GUI).
inline app::PublishedFramePtr syntheticFrame(int particlesPerAxis = 16, double lambdaMin = 0.75) {
    app::SyntheticModel model(particlesPerAxis);
    model.setParameter("lambdaMin", lambdaMin);
    model.setParameter("particleRadius", 0.25 / particlesPerAxis);
    auto frame = std::make_shared<app::PublishedFrame>();
    frame->snapshot = model.snapshot();
    frame->parameters = model.parameters();
    frame->serial = 1;
    frame->scene = "synthetic";
    return frame;
}

/// Number of pixels whose RGB differs by more than `tolerance` in any channel.
inline int differingPixels(const QImage& a, const QImage& b, int tolerance = 8) {
    if (a.size() != b.size())
        return a.width() * a.height();
    const QImage x = a.convertToFormat(QImage::Format_RGB32), y = b.convertToFormat(QImage::Format_RGB32);
    int count = 0;
    for (int row = 0; row < x.height(); ++row) {
        const QRgb* p = reinterpret_cast<const QRgb*>(x.constScanLine(row));
        const QRgb* q = reinterpret_cast<const QRgb*>(y.constScanLine(row));
        for (int col = 0; col < x.width(); ++col)
            if (std::abs(qRed(p[col]) - qRed(q[col])) > tolerance ||
                std::abs(qGreen(p[col]) - qGreen(q[col])) > tolerance ||
                std::abs(qBlue(p[col]) - qBlue(q[col])) > tolerance)
                ++count;
    }
    return count;
}

/// Count of distinct colours (a blank or single-colour image has 1).
inline int distinctColors(const QImage& image, int limit = 64) {
    const QImage x = image.convertToFormat(QImage::Format_RGB32);
    std::vector<QRgb> seen;
    for (int row = 0; row < x.height(); row += 2) {
        const QRgb* p = reinterpret_cast<const QRgb*>(x.constScanLine(row));
        for (int col = 0; col < x.width(); col += 2) {
            if (std::find(seen.begin(), seen.end(), p[col]) == seen.end())
                seen.push_back(p[col]);
            if (int(seen.size()) >= limit)
                return limit;
        }
    }
    return int(seen.size());
}

} // namespace octo::test
