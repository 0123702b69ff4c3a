#pragma once
// Runs the octofluid-cli binary of this build (its path is compiled in by tests/CMakeLists.txt as
// OCTO_CLI_PATH); a missing binary fails the test, it never skips it.
#include <QFileInfo>
#include <QProcess>
#include <QString>
#include <QStringList>

#ifndef OCTO_CLI_PATH
#error "OCTO_CLI_PATH must name the octofluid-cli binary (set by tests/CMakeLists.txt)"
#endif

namespace octo::test {

struct CliResult {
    int code = -1; ///< exit code; -1 timeout, -2 crash
    QString out, err;
};

inline QString cliPath() {
    return QStringLiteral(OCTO_CLI_PATH);
}
inline bool cliExists() {
    return QFileInfo(cliPath()).isExecutable();
}

inline CliResult runCli(const QStringList& args, int timeoutMs = 120000) {
    QProcess p;
    p.start(cliPath(), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, "timeout"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

} // namespace octo::test
