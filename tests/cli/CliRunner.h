#pragma once
// Runs the octofluid-cli binary of this build (its path is compiled in by tests/CMakeLists.txt as
// OCTO_CLI_PATH); a missing binary fails the test, it never skips it.
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <sys/resource.h>

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

/// env: extra NAME=value entries; addressSpaceBytes > 0 limits the child's address space
/// (RLIMIT_AS), so allocations fail with std::bad_alloc as on a machine that short of memory.
inline CliResult runCli(const QStringList& args, int timeoutMs = 120000, const QStringList& env = {},
                        unsigned long long addressSpaceBytes = 0) {
    QProcess p;
    if (!env.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString& kv : env)
            e.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(e);
    }
    if (addressSpaceBytes > 0)
        p.setChildProcessModifier([addressSpaceBytes] {
            const rlimit limit{rlim_t(addressSpaceBytes), rlim_t(addressSpaceBytes)};
            setrlimit(RLIMIT_AS, &limit);
        });
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
