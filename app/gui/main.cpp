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

/// The command line's options (parsed twice: before the display opens, and by Qt).
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
        {"timeout",
         "Scripted capture or recording: give up after this many seconds (0 < s <= 86400, default 900).",
         "seconds", "900"});
    parser.addOption(
        {"window-screenshot", "With --screenshot: also save the whole window (QWidget::grab).", "file"});
    parser.addOption({"benchmark",
                      "Run for N seconds repainting continuously, print steps/s and GUI frames/s, exit.",
                      "seconds"});
}

/// The checked values of the command line.
struct CommandLine {
    octo::app::MainWindowOptions options;
    bool capture = false, record = false, benchmark = false;
    double timeout = 0.0, benchmarkSeconds = 0.0;
    int recordFrames = 0, frames = 0;
    QSize size;

    /// Checks every value (numbers, names, exclusive modes); 0, or 2 after a one-line message.
    /// Needs no QApplication: main() runs it before the display opens (issue 30: `--timeout abc`
    /// was refused only once the display was open, and without one the user read "no display").
    int check(const QCommandLineParser& parser);

private:
    int checkPreset(const QCommandLineParser& parser);
    int checkSeconds(const QCommandLineParser& parser);
    int checkRecording(const QCommandLineParser& parser);
    int checkFramesAndSize(const QCommandLineParser& parser);
};

int CommandLine::check(const QCommandLineParser& parser) {
    options.scene = parser.value("scene").toStdString();
    options.restoreLastScene = !parser.isSet("scene");
    if (const int code = checkPreset(parser); code != 0)
        return code;
    for (const QString& s : parser.values("set"))
        options.overrides.push_back(s.toStdString());
    capture = parser.isSet("screenshot");
    record = parser.isSet("record");
    benchmark = parser.isSet("benchmark");
    if (int(capture) + int(record) + int(benchmark) > 1) {
        std::fprintf(stderr, "octofluid: --screenshot, --record and --benchmark exclude each other\n");
        return 2;
    }
    // Scripted runs are reproducible and leave the user's session alone: no saved scene, layout,
    // parameters or shading are read or written.
    options.persistSettings = !capture && !record && !benchmark;
    options.autoPlay = !capture && !record && !parser.isSet("paused");
    if (const int code = checkSeconds(parser); code != 0)
        return code;
    if (const int code = checkRecording(parser); code != 0)
        return code;
    return checkFramesAndSize(parser);
}

int CommandLine::checkPreset(const QCommandLineParser& parser) {
    const QString preset = parser.value("preset");
    if (preset == "interactive")
        options.preset = octo::app::ResolutionPreset::Interactive;
    else if (preset == "paper")
        options.preset = octo::app::ResolutionPreset::Paper;
    else if (preset == "high")
        options.preset = octo::app::ResolutionPreset::High;
    else {
        std::fprintf(stderr, "octofluid: --preset expects interactive, paper or high, got '%s'\n",
                     qPrintable(preset));
        return 2;
    }
    return 0;
}

int CommandLine::checkSeconds(const QCommandLineParser& parser) {
    if (!parseSeconds(parser.value("timeout"), 86400.0, &timeout)) {
        std::fprintf(stderr, "octofluid: --timeout expects seconds in (0, 86400], got '%s'\n",
                     qPrintable(parser.value("timeout")));
        return 2;
    }
    if (benchmark && !parseSeconds(parser.value("benchmark"), 86400.0, &benchmarkSeconds)) {
        std::fprintf(stderr, "octofluid: --benchmark expects seconds in (0, 86400], got '%s'\n",
                     qPrintable(parser.value("benchmark")));
        return 2;
    }
    return 0;
}

int CommandLine::checkRecording(const QCommandLineParser& parser) {
    if (!record) {
        if (parser.isSet("frames")) {
            std::fprintf(stderr,
                         "octofluid: --frames goes with --record (a screenshot uses --after-frames)\n");
            return 2;
        }
        return 0;
    }
    bool okFrames = false;
    recordFrames = parser.value("frames").toInt(&okFrames);
    if (!parser.isSet("frames") || !okFrames || recordFrames < 1 || recordFrames > 1000000) {
        std::fprintf(stderr, "octofluid: --record needs --frames N with N in 1..1000000, got '%s'\n",
                     qPrintable(parser.value("frames")));
        return 2;
    }
    const QString format = parser.value("record-format");
    if (format != "png" && format != "mp4") {
        std::fprintf(stderr, "octofluid: --record-format expects png or mp4, got '%s'\n", qPrintable(format));
        return 2;
    }
    if (format == "mp4" && octo::app::RecordingDock::ffmpegPath().isEmpty()) {
        std::fprintf(stderr, "octofluid: --record-format mp4 needs ffmpeg, which is not installed (apt-get "
                             "install ffmpeg); --record-format png needs nothing else\n");
        return 2;
    }
    return 0;
}

int CommandLine::checkFramesAndSize(const QCommandLineParser& parser) {
    bool ok = true;
    frames = parser.value("after-frames").toInt(&ok);
    if (!ok || frames < 0) {
        std::fprintf(stderr, "octofluid: --after-frames expects a non-negative integer, got '%s'\n",
                     qPrintable(parser.value("after-frames")));
        return 2;
    }
    if (parser.isSet("size")) {
        const QStringList wh = parser.value("size").split('x');
        if (wh.size() == 2)
            size = QSize(wh[0].toInt(), wh[1].toInt());
        if (!size.isValid() || size.width() < 16 || size.height() < 16) {
            std::fprintf(stderr,
                         "octofluid: --size expects WxH with W and H >= 16, e.g. 1280x720, got '%s'\n",
                         qPrintable(parser.value("size")));
            return 2;
        }
    }
    return 0;
}

/// Checks the values before anything opens a display or a window: 0, or the exit code. A line
/// that Qt's own options (-platform ...) make unparsable here is parsed and checked again once
/// QApplication exists.
int checkBeforeDisplay(int argc, char** argv) {
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    QCommandLineParser early;
    addOptions(early);
    CommandLine cl;
    if (early.parse(args) && !early.isSet("help"))
        return cl.check(early);
    return 0;
}

/// Without a display: --help is printed by Qt offscreen (true); anything else is told how to run
/// under Xvfb (false).
bool prepareForNoDisplay(int argc, char** argv) {
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

void setDefaultSurfaceFormat() {
    QSurfaceFormat format;
    format.setVersion(3, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);
    format.setDepthBufferSize(24);
    QSurfaceFormat::setDefaultFormat(format);
}

/// --overlay: false (after a message) when it names an unknown overlay.
bool applyOverlays(octo::app::MainWindow& window, const QCommandLineParser& parser) {
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

/// --record DIR --frames N: records once the first frame is shown, exits when done, failed,
/// blown up or timed out.
int runRecording(QApplication& app, octo::app::MainWindow& window, const CommandLine& cl,
                 const QCommandLineParser& parser) {
    const QSize recordSize = cl.size.isValid() ? cl.size : QSize(1280, 720);
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
    QObject::connect(&window, &octo::app::MainWindow::framePresented, &app, [&] {
        if (started)
            return;
        started = true;
        QString error;
        if (!window.startRecording(folder, recordSize, cl.recordFrames, &error,
                                   octo::app::FrameRecorder::ExistingFolder::Refuse)) {
            finish(2, "cannot record: " + error);
            return;
        }
        std::printf("octofluid: recording %d frames of %s at %dx%d to %s\n", cl.recordFrames,
                    cl.options.scene.c_str(), recordSize.width(), recordSize.height(),
                    qPrintable(window.recorder()->folder()));
        std::fflush(stdout);
        window.worker()->play();
    });
    QTimer::singleShot(int(cl.timeout * 1000.0), &app, [&] {
        finish(1, QString("recording timed out after %1 s with %2 of %3 frames written")
                      .arg(cl.timeout)
                      .arg(window.recorder()->framesWritten())
                      .arg(cl.recordFrames));
    });
    app.exec();
    window.stopRecording();
    return exitCode;
}

/// --benchmark S: repaints continuously for S seconds from the first shown frame (construction
/// does not count), prints steps/s and GUI frames/s.
int runBenchmark(QApplication& app, octo::app::MainWindow& window, const CommandLine& cl) {
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
    QTimer::singleShot(int(cl.benchmarkSeconds * 1000), &app, [&] {
        const auto frame = window.worker()->latestFrame();
        const double elapsed = clock.elapsed() / 1000.0;
        const uint64_t steps = frame && frame->snapshot ? frame->snapshot->step - firstStep : 0;
        std::printf("scene %s: %zu fluid particles, %.2f steps/s (%llu steps in %.1f s, %.3f s simulated), "
                    "GUI %.1f frames/s (paint mean %.1f ms, max %.1f ms; octree overlay %s)\n",
                    cl.options.scene.c_str(),
                    frame && frame->snapshot ? frame->snapshot->positions.size() : size_t(0), steps / elapsed,
                    (unsigned long long)steps, elapsed,
                    frame && frame->snapshot ? frame->snapshot->time - std::max(firstTime, 0.0) : 0.0,
                    paints / elapsed, paints ? paintMsSum / paints : 0.0, paintMsMax,
                    window.viewport()->settings().showOctree() ? "on" : "off");
        app.exit(window.lastProblem().isEmpty() ? 0 : 1);
    });
    // Start counting once the scene is built, so construction time does not count.
    QObject::connect(&window, &octo::app::MainWindow::framePresented, &app, [&] {
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

/// --screenshot FILE --after-frames N (and --window-screenshot FILE): saves, then exits.
int runCapture(QApplication& app, octo::app::MainWindow& window, const CommandLine& cl,
               const QCommandLineParser& parser) {
    int exitCode = 1;
    const bool grabWindow = parser.isSet("window-screenshot");
    const QString windowFile = parser.value("window-screenshot");
    QObject::connect(&window, &octo::app::MainWindow::captureFinished, &app,
                     [&](int code, const QString& message) {
                         exitCode = code;
                         std::fprintf(code == 0 ? stdout : stderr, "octofluid: %s\n", qPrintable(message));
                         if (code == 0 && grabWindow)
                             QApplication::processEvents(); // lay out the status bar
                         if (code == 0 && grabWindow && !window.grabWindow().save(windowFile)) {
                             std::fprintf(stderr, "octofluid: cannot write '%s'\n", qPrintable(windowFile));
                             exitCode = 1;
                         }
                         app.exit(code);
                     });
    window.startCapture(parser.value("screenshot"), cl.frames, 1.0 / 60.0, cl.size, cl.timeout);
    app.exec();
    return exitCode;
}
} // namespace

int main(int argc, char** argv) {
    if (const int code = checkBeforeDisplay(argc, argv); code != 0)
        return code;
    if (!hasDisplay() && !prepareForNoDisplay(argc, argv))
        return 1;
    setDefaultSurfaceFormat();

    QApplication app(argc, argv);
    QApplication::setOrganizationName("octofluid");
    QApplication::setApplicationName("octofluid");

    QCommandLineParser parser;
    addOptions(parser);
    parser.process(app);
    CommandLine cl;
    if (const int code = cl.check(parser); code != 0)
        return code;

    octo::app::MainWindow window(cl.options);
    if (!applyOverlays(window, parser))
        return 2;
    window.show();
    window.activateWindow(); // keys reach the window's shortcuts before the first click
    if (cl.record)
        return runRecording(app, window, cl, parser);
    if (cl.benchmark)
        return runBenchmark(app, window, cl);
    if (cl.capture)
        return runCapture(app, window, cl, parser);
    return app.exec();
}
