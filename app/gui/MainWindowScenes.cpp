// MainWindow's scene loading: resolution presets, the parameters saved per particle radius, and
// the policy for a scene that cannot be loaded (the running one goes on, the banner says why).
#include "MainWindow.h"

#include "ParameterPanel.h"
#include "ScriptedCapture.h"
#include "scene/SceneLibrary.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QSettings>
#include <QStatusBar>
#include <cmath>
#include <cstdlib>

namespace octo::app {

namespace {
/// The banner's words for a scene that could not be loaded while `running` goes on (empty: none).
QString couldNotLoad(const std::string& scene, const QString& why, const std::string& running) {
    return QString("Could not load %1: %2%3")
        .arg(QString::fromStdString(scene), why,
             running.empty() ? QString() : " (still running " + QString::fromStdString(running) + ")");
}
} // namespace

QString MainWindow::sceneFolder() {
    return QString::fromStdString(sceneDirectory());
}

void MainWindow::openSceneDialog() {
    const QString path = QFileDialog::getOpenFileName(this, "Open scene", sceneFolder(), "Scene (*.json)");
    if (!path.isEmpty())
        openSceneFile(path);
}

void MainWindow::onWorkerError(const QString& message) {
    if (!settlingBuilt_) // the worker was building a scene and failed: nothing settles any more
        settlingBanner_->setVisible(false);
    if (!requestedScene_.empty() && requestedScene_ != currentScene_ && !currentScene_.empty()) {
        // The worker could not build the requested scene and kept the running one.
        showProblem(couldNotLoad(requestedScene_, message, currentScene_));
        requestedScene_ = currentScene_;
        const int index = sceneCombo_->findData(QString::fromStdString(currentScene_));
        const QSignalBlocker b(sceneCombo_);
        sceneCombo_->setCurrentIndex(index);
    } else {
        showProblem(message);
    }
    capture_->fail(message);
}

void MainWindow::setPreset(ResolutionPreset preset) {
    preset_ = preset;
    {
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset));
    }
    if (options_.persistSettings && preset != ResolutionPreset::Custom)
        QSettings().setValue("scene/preset", int(preset));
    if (preset != ResolutionPreset::Custom && !currentScene_.empty())
        loadScene(currentScene_);
}

void MainWindow::loadScene(const std::string& scene) {
    // Read the description here first: a missing or malformed scene keeps the running one.
    double radius = 0.0;
    bool known = true;
    try {
        const SceneDescription d = describeScene(scene);
        radius = preset_ == ResolutionPreset::Custom && scene == currentScene_ ? sceneRadius_->value()
                                                                               : presetRadius(preset_, d);
    } catch (const std::exception& e) {
        // Not a library scene nor a file: a name only the model factory knows (tests), or an error.
        known = false;
        if (isSceneFile(scene) || scene.find('/') != std::string::npos) {
            showProblem(couldNotLoad(scene, e.what(), currentScene_));
            return;
        }
    }
    if (preset_ == ResolutionPreset::Custom && scene != currentScene_) {
        // A typed radius belongs to the scene it was typed for; another scene uses its file's.
        preset_ = ResolutionPreset::Paper;
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset_));
    }
    std::vector<std::string> overrides;
    if (known)
        overrides = presetOverrides(radius);
    for (const auto& o : options_.overrides) // the command line / the caller wins over presets
        overrides.push_back(o);
    requestedRadius_ = radius;
    postLoad(scene, overrides);
    if (options_.persistSettings && known) {
        QSettings().setValue("scene/last", QString::fromStdString(scene));
        if (preset_ != ResolutionPreset::Custom)
            QSettings().setValue("scene/preset", int(preset_));
    }
    selectSceneInCombo(scene);
}

void MainWindow::selectSceneInCombo(const std::string& scene) {
    const QString key = QString::fromStdString(scene);
    int index = sceneCombo_->findData(key);
    if (index < 0 && isSceneFile(scene)) {
        sceneCombo_->addItem(QFileInfo(key).completeBaseName() + " (file)", key);
        index = sceneCombo_->count() - 1;
    }
    if (index >= 0) {
        const QSignalBlocker b(sceneCombo_);
        sceneCombo_->setCurrentIndex(index);
    }
}

void MainWindow::postLoad(const std::string& scene, const std::vector<std::string>& overrides) {
    requestedScene_ = scene;
    showSettling(startSettlingOf(scene, overrides));
    // A scene switch keeps the play state: playing goes on playing, paused stays paused.
    const bool playing = worker_->isPlaying();
    worker_->loadScene(scene, overrides);
    if (playing)
        worker_->play();
    if (const auto r = overriddenRadius(overrides))
        requestedRadius_ = *r;
    if (options_.persistSettings)
        applySavedParameters(requestedRadius_);
}

double MainWindow::startSettlingOf(const std::string& scene, const std::vector<std::string>& overrides) {
    double seconds = 0.0;
    auto take = [&](const std::string& name, const std::string& value) {
        if (name == "startSettling")
            seconds = std::strtod(value.c_str(), nullptr);
    };
    try {
        for (const auto& [name, value] : describeScene(scene).parameters)
            take(name, value);
    } catch (const std::exception&) {
        // a name only the model factory knows: its overrides alone
    }
    for (const auto& o : overrides)
        if (const size_t eq = o.find('='); eq != std::string::npos)
            take(o.substr(0, eq), o.substr(eq + 1));
    return seconds;
}

void MainWindow::showSettling(double seconds) {
    settlingBuilt_ = false;
    if (seconds > 0.0)
        settlingBanner_->setText(
            QString("Settling the start (%1 s simulated) before t = 0\u2026").arg(seconds, 0, 'f', 2));
    settlingBanner_->setVisible(seconds > 0.0);
}

QString MainWindow::settlingText() const {
    return settlingBanner_->isHidden() ? QString() : settlingBanner_->text();
}

void MainWindow::applySavedParameters(double radius) {
    // Values the user edited in earlier sessions (lengths only at the radius they were chosen for).
    QSettings s;
    QStringList applied;
    for (const ParameterInfo& p : parameterTable()) {
        if (p.name == "particleRadius")
            continue; // the resolution comes from the preset
        const QString key = savedParameterKey(p, radius);
        if (!s.contains(key))
            continue;
        worker_->setParameter(p.name, s.value(key).toDouble());
        applied << QString::fromStdString(p.label);
    }
    if (!applied.isEmpty())
        showNotice(QString("Applied saved values of %1 (Scene \u25B8 Restore defaults forgets them)")
                       .arg(applied.join(", ")),
                   8000);
}

void MainWindow::openSceneFile(const QString& path) {
    // A file the user picked: its own resolution wins (as in the CLI) until they change r.
    preset_ = ResolutionPreset::Paper;
    {
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset_));
    }
    loadScene(path.toStdString());
}

void MainWindow::restoreDefaults() {
    if (options_.persistSettings) {
        QSettings s;
        s.remove("parameters");
    }
    showNotice("Restored default parameters: the scene reloads with its own values", 5000);
    if (!currentScene_.empty())
        loadScene(currentScene_);
}

void MainWindow::onParameterEdited(const QString& name, double value) {
    const ParameterInfo* info = findParameter(name.toStdString());
    if (name == "particleRadius") {
        // The resolution: same as the Scene dock's radius field (reloads the scene at that r).
        sceneRadius_->setValue(value);
        return;
    }
    worker_->setParameter(name.toStdString(), value);
    shownParameters_[name.toStdString()] = value;
    if (options_.persistSettings && info) // lengths under the radius the scene was loaded with
        QSettings().setValue(savedParameterKey(*info, requestedRadius_), value);
    if (info && info->needsReset)
        statusBar()->showMessage(QString::fromStdString(info->label) + ": applies after reset", 4000);
    if (name == "leafSize")
        warnAboutLeafSize(value);
}

void MainWindow::warnAboutLeafSize(double leafSize) {
    const bool warned = statusBar()->currentMessage().startsWith("Leaf edge L");
    if (!(leafSize > 0.0)) {
        if (warned)
            statusBar()->clearMessage(); // back to automatic: nothing to warn about
        return;
    }
    // docs/ALGORITHMS.md §5: a leaf edge above 2r/sqrt(3) can open holes in one-particle sheets.
    const auto frame = worker_->latestFrame();
    const double r =
        frame ? frame->parameters.get(Param::particleRadius) : findParameter("particleRadius")->defaultValue;
    if (leafSize > 2.0 * r / std::sqrt(3.0))
        showNotice(QString("Leaf edge L = %1 mm > 2r/sqrt(3) = %2 mm: thin sheets may show holes")
                       .arg(leafSize * 1000.0, 0, 'f', 2)
                       .arg(2.0 * r / std::sqrt(3.0) * 1000.0, 0, 'f', 2),
                   8000);
    else if (warned)
        statusBar()->clearMessage(); // the warning no longer holds: do not leave it standing
}

void MainWindow::syncParameterWidgets(const PublishedFrame& frame) {
    // Whatever the model runs with is what the docks show (scene values, presets, clamps).
    if (frame.parameters.values() == shownParameters_)
        return;
    shownParameters_ = frame.parameters.values();
    for (auto& [group, panel] : panels_)
        panel->setValues(frame.parameters);
    const double r = frame.parameters.get(Param::particleRadius);
    if (std::abs(sceneRadius_->value() - r) > 1e-9 && !sceneRadius_->hasFocus()) {
        const QSignalBlocker b(sceneRadius_);
        sceneRadius_->setValue(r);
    }
}

} // namespace octo::app
