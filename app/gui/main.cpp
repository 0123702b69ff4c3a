// octofluid: the desktop application (see MainWindow) and its scripted modes:
//   octofluid --scene NAME [--set name=value ...] [--overlay a,b,...] --screenshot FILE.png --after-frames N
//   octofluid --scene NAME --record DIR --frames N [--size WxH] [--record-format png|mp4]
#include "MainWindow.h"
#include "RecordingDock.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QSurfaceFormat>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
using octo::app::MainWindow;

/// A number of seconds in (0, max]: refuses text, NaN, infinities, zero, negatives and values
/// beyond `max` (which would overflow the timer's milliseconds and silently disable it).
bool parseSeconds(const QString& text, double max, double* out) {
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok || !std::isfinite(v) || v <= 0.0 || v > max)
        return false;
    *out = v;
    return true;
}

bool hasDisplay() {
    const char* platform = std::getenv("QT_QPA_PLATFORM");
    return (platform && *platform) || std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
}

/// False (after saying how to run it) when there is no display; --help is printed without one.
bool prepareDisplay(int argc, char** argv) {
    if (hasDisplay())
        return true;
    bool help = false;
    for (int i = 1; i < argc; ++i)
        help = help || !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
    if (help) {
        // --help needs no window: let Qt print it without a display.
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
        return true;
    }
    std::fprintf(stderr,
                 "octofluid: no display (DISPLAY is not set). Run it under Xvfb:\n"
                 "  xvfb-run -a -s \"-screen 0 1280x1024x24\" %s %s\n"
                 "or use the headless tool: octofluid-cli run --scene dam-break --frames 60\n",
                 argv[0], argc > 1 ? "..." : "--scene dam-break");
    return false;
}

void addOptions(QCommandLineParser& parser) {
    parser.setApplicationDescription(
        "PCISPH fluid with rigid bodies and adaptive-octree surface reconstruction.");
    parser.addHelpOption();
    parser.addOption(
        {"scene", "Built-in scene name or scene .json file (default: the last session's, else dam-break).",
         "name", "dam-break"});
    parser.addOption(
        {"preset",
         "Resolution: interactive (<= 9 k particles, default), paper (the scene file's r), high (2x paper).",
         "name", "interactive"});
    parser.addOption({"set", "Parameter override name=value (repeatable).", "name=value"});
    parser.addOption(
        {"overlay", "Comma list: particles, surface-particles, mesh, octree, boundary, ...", "list"});
    parser.addOption(
        {"screenshot", "Save the viewport to FILE after --after-frames frames, then exit.", "file"});
    parser.addOption({"after-frames", "Frames (1/60 s each) to simulate before the screenshot.", "n", "0"});
    parser.addOption(
        {"size", "Screenshot size WxH (default: the viewport's size); recording size (default 1280x720).",
         "WxH"});
    parser.addOption({"record",
                      "Record N simulated frames (--frames) as PNGs with frames.csv into DIR (new or empty), "
                      "then exit.",
                      "dir"});
    parser.addOption(
        {"frames", "With --record: simulated frames to record (1 / fps of the scene each).", "n"});
    parser.addOption(
        {"record-format", "With --record: png (default) or mp4 (needs ffmpeg; PNGs kept).", "format", "png"});
    parser.addOption({"legend", "With --record: draw the colour legend into the images."});
    parser.addOption({"paused", "Start paused."});
    parser.addOption(
        {"timeout", "Scripted capture or recording: give up after this many seconds (1..86400, default 900).",
         "seconds", "900"});
    parser.addOption(
        {"window-screenshot", "With --screenshot: also save the whole window (QWidget::grab).", "file"});
    parser.addOption({"benchmark",
                      "Run for N seconds repainting continuously, print steps/s and GUI frames/s, exit.",
                      "seconds"});
}

/// What the command line asks for. Every reader below prints why and returns false on a value it
/// refuses (exit code 2).
struct Launch {
    octo::app::MainWindowOptions options;
    bool capture = false, record = false, benchmark = false;
    double timeout = 0.0, benchmarkSeconds = 0.0;
    int recordFrames = 0, afterFrames = 0;
    QSize size; ///< invalid: the viewport's (screenshot) or 1280x720 (recording)
};

bool readPreset(const QString& preset, Launch& l) {
    using octo::app::ResolutionPreset;
    if (preset == "interactive")
        l.options.preset = ResolutionPreset::Interactive;
    else if (preset == "paper")
        l.options.preset = ResolutionPreset::Paper;
    else if (preset == "high")
        l.options.preset = ResolutionPreset::High;
    else {
        std::fprintf(stderr, "octofluid: --preset expects interactive, paper or high, got '%s'\n",
                     qPrintable(preset));
        return false;
    }
    return true;
}

bool readRecording(const QCommandLineParser& parser, Launch& l) {
    if (!l.record) {
        if (!parser.isSet("frames"))
            return true;
        std::fprintf(stderr, "octofluid: --frames goes with --record (a screenshot uses --after-frames)\n");
        return false;
    }
    bool okFrames = false;
    l.recordFrames = parser.value("frames").toInt(&okFrames);
    if (!parser.isSet("frames") || !okFrames || l.recordFrames < 1 || l.recordFrames > 1000000) {
        std::fprintf(stderr, "octofluid: --record needs --frames N with N in 1..1000000, got '%s'\n",
                     qPrintable(parser.value("frames")));
        return false;
    }
    const QString format = parser.value("record-format");
    if (format != "png" && format != "mp4") {
        std::fprintf(stderr, "octofluid: --record-format expects png or mp4, got '%s'\n", qPrintable(format));
        return false;
    }
    if (format == "mp4" && octo::app::RecordingDock::ffmpegPath().isEmpty()) {
        std::fprintf(stderr, "octofluid: --record-format mp4 needs ffmpeg, which is not installed (apt-get "
                             "install ffmpeg); --record-format png needs nothing else\n");
        return false;
    }
    return true;
}

bool readCaptureSize(const QCommandLineParser& parser, Launch& l) {
    bool ok = true;
    l.afterFrames = parser.value("after-frames").toInt(&ok);
    if (!ok || l.afterFrames < 0) {
        std::fprintf(stderr, "octofluid: --after-frames expects a non-negative integer, got '%s'\n",
                     qPrintable(parser.value("after-frames")));
        return false;
    }
    if (parser.isSet("size")) {
        const QStringList wh = parser.value("size").split('x');
        if (wh.size() == 2)
            l.size = QSize(wh[0].toInt(), wh[1].toInt());
        if (!l.size.isValid() || l.size.width() < 16 || l.size.height() < 16) {
            std::fprintf(stderr, "octofluid: --size expects WxH, e.g. 1280x720\n");
            return false;
        }
    }
    return true;
}

bool readLaunch(const QCommandLineParser& parser, Launch& l) {
    l.options.scene = parser.value("scene").toStdString();
    l.options.restoreLastScene = !parser.isSet("scene");
    if (!readPreset(parser.value("preset"), l))
        return false;
    for (const QString& s : parser.values("set"))
        l.options.overrides.push_back(s.toStdString());
    l.capture = parser.isSet("screenshot");
    l.record = parser.isSet("record");
    l.benchmark = parser.isSet("benchmark");
    if (int(l.capture) + int(l.record) + int(l.benchmark) > 1) {
        std::fprintf(stderr, "octofluid: --screenshot, --record and --benchmark exclude each other\n");
        return false;
    }
    // Scripted runs are reproducible and leave the user's session alone: no saved scene, layout,
    // parameters or shading are read or written.
    l.options.persistSettings = !l.capture && !l.record && !l.benchmark;
    l.options.autoPlay = !l.capture && !l.record && !parser.isSet("paused");
    if (!parseSeconds(parser.value("timeout"), 86400.0, &l.timeout)) {
        std::fprintf(stderr, "octofluid: --timeout expects seconds in 1..86400, got '%s'\n",
                     qPrintable(parser.value("timeout")));
        return false;
    }
    if (l.benchmark && !parseSeconds(parser.value("benchmark"), 86400.0, &l.benchmarkSeconds)) {
        std::fprintf(stderr, "octofluid: --benchmark expects seconds in (0, 86400], got '%s'\n",
                     qPrintable(parser.value("benchmark")));
        return false;
    }
    return readRecording(parser, l) && readCaptureSize(parser, l);
}

bool applyOverlays(const QCommandLineParser& parser, MainWindow& window) {
    if (!parser.isSet("overlay"))
        return true;
    octo::render::RenderSettings s = window.viewport()->settings();
    const auto unknown = octo::render::applyOverlayList(s, parser.value("overlay").toStdString());
    if (!unknown.empty()) {
        std::fprintf(
            stderr,
            "octofluid: unknown overlay '%s' (known: particles, surface-particles, mesh, octree, "
            "octree-surface, octree-interior, octree-exterior, bodies, boundary, grid, diagnostic)\n",
            unknown.front().c_str());
        return false;
    }
    window.setRenderSettings(s);
    return true;
}

/// --record: starts with the first presented frame, ends when the take is written (0), fails or
/// times out (1), or cannot start (2).
int runRecording(QApplication& app, MainWindow& window, const QCommandLineParser& parser, const Launch& l) {
    const QSize recordSize = l.size.isValid() ? l.size : QSize(1280, 720);
    const QString folder = parser.value("record");
    if (parser.value("record-format") == "mp4")
        window.recordingDock()->setFormat(octo::app::RecordingDock::Format::Mp4);
    window.recordingDock()->setLegend(parser.isSet("legend"));
    int exitCode = 1;
    bool started = false, finished = false;
    auto finish = [&](int code, const QString& message) {
        if (finished)
            return;
        finished = true;
        exitCode = code;
        std::fprintf(code == 0 ? stdout : stderr, "octofluid: %s\n", qPrintable(message));
        app.exit(code);
    };
    QObject::connect(window.recordingDock(), &octo::app::RecordingDock::done, &app,
                     [&](bool ok, const QString& message) { finish(ok ? 0 : 1, message); });
    QObject::connect(window.worker(), &octo::app::SimulationWorker::errorOccurred, &app,
                     [&](const QString& m) { finish(1, "recording failed: " + m); });
    QObject::connect(window.worker(), &octo::app::SimulationWorker::blowUp, &app,
                     [&](const QString& m) { finish(1, "recording stopped: the simulation blew up: " + m); });
    QObject::connect(&window, &MainWindow::framePresented, &app, [&] {
        if (started)
            return;
        started = true;
        QString error;
        if (!window.startRecording(folder, recordSize, l.recordFrames, &error,
                                   octo::app::FrameRecorder::ExistingFolder::Refuse)) {
            finish(2, "cannot record: " + error);
            return;
        }
        std::printf("octofluid: recording %d frames of %s at %dx%d to %s\n", l.recordFrames,
                    l.options.scene.c_str(), recordSize.width(), recordSize.height(),
                    qPrintable(window.recorder()->folder()));
        std::fflush(stdout);
        window.worker()->play();
    });
    QTimer::singleShot(int(l.timeout * 1000.0), &app, [&] {
        finish(1, QString("recording timed out after %1 s with %2 of %3 frames written")
                      .arg(l.timeout)
                      .arg(window.recorder()->framesWritten())
                      .arg(l.recordFrames));
    });
    app.exec();
    window.stopRecording();
    return exitCode;
}

/// --benchmark: repaints continuously for the given seconds, counted from the first presented
/// frame, then prints steps/s and frames/s.
int runBenchmark(QApplication& app, MainWindow& window, const Launch& l) {
    window.setContinuousRepaint(true);
    QElapsedTimer clock;
    clock.start();
    int paints = 0;
    double paintMsSum = 0.0, paintMsMax = 0.0;
    uint64_t firstStep = 0;
    double firstTime = -1.0;
    QObject::connect(window.viewport(), &octo::app::ViewportWidget::rendered, [&] {
        ++paints;
        paintMsSum += window.viewport()->lastPaintMs();
        paintMsMax = std::max(paintMsMax, window.viewport()->lastPaintMs());
    });
    QTimer::singleShot(int(l.benchmarkSeconds * 1000), &app, [&] {
        const auto frame = window.worker()->latestFrame();
        const double elapsed = clock.elapsed() / 1000.0;
        const uint64_t steps = frame && frame->snapshot ? frame->snapshot->step - firstStep : 0;
        std::printf("scene %s: %zu fluid particles, %.2f steps/s (%llu steps in %.1f s, %.3f s simulated), "
                    "GUI %.1f frames/s (paint mean %.1f ms, max %.1f ms; octree overlay %s)\n",
                    l.options.scene.c_str(),
                    frame && frame->snapshot ? frame->snapshot->positions.size() : size_t(0), steps / elapsed,
                    (unsigned long long)steps, elapsed,
                    frame && frame->snapshot ? frame->snapshot->time - std::max(firstTime, 0.0) : 0.0,
                    paints / elapsed, paints ? paintMsSum / paints : 0.0, paintMsMax,
                    window.viewport()->settings().showOctree() ? "on" : "off");
        app.exit(window.lastProblem().isEmpty() ? 0 : 1);
    });
    // Start counting once the scene is built, so construction time does not count.
    QObject::connect(&window, &MainWindow::framePresented, &app, [&] {
        if (firstTime >= 0.0)
            return;
        const auto frame = window.worker()->latestFrame();
        firstStep = frame->snapshot->step;
        firstTime = frame->snapshot->time;
        clock.restart();
        paints = 0;
        paintMsSum = paintMsMax = 0.0;
    });
    return app.exec();
}

/// --screenshot (and --window-screenshot): the exit code of the scripted capture.
int runCapture(QApplication& app, MainWindow& window, const QCommandLineParser& parser, const Launch& l) {
    int exitCode = 1;
    QObject::connect(&window, &MainWindow::captureFinished, &app, [&](int code, const QString& message) {
        exitCode = code;
        std::fprintf(code == 0 ? stdout : stderr, "octofluid: %s\n", qPrintable(message));
        if (code == 0 && parser.isSet("window-screenshot"))
            QApplication::processEvents(); // lay out the status bar
        if (code == 0 && parser.isSet("window-screenshot") &&
            !window.grabWindow().save(parser.value("window-screenshot"))) {
            std::fprintf(stderr, "octofluid: cannot write '%s'\n",
                         qPrintable(parser.value("window-screenshot")));
            exitCode = 1;
        }
        app.exit(code);
    });
    window.startCapture(parser.value("screenshot"), l.afterFrames, 1.0 / 60.0, l.size, l.timeout);
    app.exec();
    return exitCode;
}
} // namespace

int main(int argc, char** argv) {
    if (!prepareDisplay(argc, argv))
        return 1;
    QSurfaceFormat format;
    format.setVersion(3, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);
    format.setDepthBufferSize(24);
    QSurfaceFormat::setDefaultFormat(format);

    QApplication app(argc, argv);
    QApplication::setOrganizationName("octofluid");
    QApplication::setApplicationName("octofluid");
    QCommandLineParser parser;
    addOptions(parser);
    parser.process(app);
    Launch launch;
    if (!readLaunch(parser, launch))
        return 2;

    MainWindow window(launch.options);
    if (!applyOverlays(parser, window))
        return 2;
    window.show();
    window.activateWindow(); // keys reach the window's shortcuts before the first click
    if (launch.record)
        return runRecording(app, window, parser, launch);
    if (launch.benchmark)
        return runBenchmark(app, window, launch);
    if (launch.capture)
        return runCapture(app, window, parser, launch);
    return app.exec();
}
