// A libFuzzer-compatible driver for compilers without libFuzzer (CI builds with g++): it links
// one fuzz target's LLVMFuzzerTestOneInput, replays the seed files given on the command line,
// then feeds random mutations of them (bit flips, huge counts, truncations, splices) for a
// bounded time. The target itself asserts that every input parses or raises the reader's
// documented error; this driver turns everything else into a failure that names the input:
//   - a crash, trap or sanitizer report (signal / death callback),
//   - an exception the target did not catch (terminate handler),
//   - one allocation above the memory limit (the readers promise bounded memory),
//   - one input running longer than the per-input limit (a hang, not a speed measurement).
// The failing input is written to ./fuzz-failure-<target>.bin for replay.
// Usage: fuzz_replay_X NAME SEED_FILE_OR_DIR...
// Environment: OCTO_FUZZ_SECONDS (mutation time, default 6), OCTO_FUZZ_SEED (default 1),
//              OCTO_FUZZ_INPUT_TIMEOUT (s per input, default 60), OCTO_FUZZ_MALLOC_LIMIT_MB (256).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#include <sanitizer/common_interface_defs.h>
#define OCTO_HAVE_SANITIZER 1
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

// The input being run, kept where the failure handlers can write it out without allocating.
std::string g_name = "target";
const Bytes* g_current = nullptr;
std::atomic<int64_t> g_inputStartMs{-1}; // -1: no input running
std::size_t g_mallocLimit = std::size_t(256) << 20;
std::atomic<bool> g_failing{false};

int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

double envNumber(const char* name, double fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::atof(v) : fallback;
}

// Async-signal-safe: only write(2).
void say(const char* text) {
    [[maybe_unused]] auto n = write(2, text, std::strlen(text));
}

void saveCurrentInput(const char* why) {
    if (g_failing.exchange(true))
        return;
    say("\nfuzz_replay: FAILURE (");
    say(why);
    say(") on an input of the target ");
    say(g_name.c_str());
    if (!g_current) {
        say(" (no input running)\n");
        return;
    }
    char path[512];
    std::snprintf(path, sizeof path, "fuzz-failure-%s.bin", g_name.c_str());
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        [[maybe_unused]] auto n = write(fd, g_current->data(), g_current->size());
        close(fd);
        say("; written to ");
        say(path);
        say(" (replay: the test binary with that file as its only seed, OCTO_FUZZ_SECONDS=0)");
    }
    say("\n");
}

void onSignal(int sig) {
    saveCurrentInput(sig == SIGALRM ? "hang" : "crash signal");
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void onTerminate() {
    const char* what = "unknown exception";
    try {
        if (auto e = std::current_exception())
            std::rethrow_exception(e);
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    saveCurrentInput("an exception the reader does not document escaped");
    say("fuzz_replay: exception: ");
    say(what);
    say("\n");
    std::_Exit(1);
}

// Watches the running input: past the limit it is a hang, and the process ends with the input saved.
void watchdog(double limitSeconds) {
    const auto limitMs = static_cast<int64_t>(limitSeconds * 1000);
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const int64_t start = g_inputStartMs.load();
        if (start >= 0 && nowMs() - start > limitMs) {
            saveCurrentInput("hang: one input ran longer than OCTO_FUZZ_INPUT_TIMEOUT");
            std::_Exit(3);
        }
    }
}

void runOne(const Bytes& input) {
    g_current = &input;
    g_inputStartMs = nowMs();
    // libFuzzer passes a non-null pointer even for empty inputs.
    static const uint8_t empty = 0;
    LLVMFuzzerTestOneInput(input.empty() ? &empty : input.data(), input.size());
    g_inputStartMs = -1;
    g_current = nullptr;
}

Bytes readFile(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::vector<Bytes> loadSeeds(int argc, char** argv) {
    std::vector<Bytes> seeds;
    for (int i = 2; i < argc; ++i) {
        const std::filesystem::path p(argv[i]);
        if (std::filesystem::is_directory(p)) {
            std::vector<std::filesystem::path> files;
            for (const auto& e : std::filesystem::directory_iterator(p))
                if (e.is_regular_file())
                    files.push_back(e.path());
            std::sort(files.begin(), files.end()); // the same order on every machine
            for (const auto& f : files)
                seeds.push_back(readFile(f));
        } else if (std::filesystem::is_regular_file(p)) {
            seeds.push_back(readFile(p));
        } else {
            std::fprintf(stderr, "fuzz_replay: seed %s does not exist\n", argv[i]);
            std::exit(2);
        }
    }
    return seeds;
}

// Counts a hostile file declares: the readers must check them against the bytes that remain.
const char* const kHugeNumbers[] = {"200000000", "4294967295", "4294967296", "18446744073709551615",
                                    "-1",        "1e30",       "nan",        "99999999999999999999",
                                    "0",         "2147483648", "-2147483649"};

class Mutator {
public:
    explicit Mutator(uint64_t seed) : rng_(seed) {}

    Bytes mutate(const std::vector<Bytes>& corpus) {
        Bytes b = corpus[pick(corpus.size())];
        const int rounds = 1 + static_cast<int>(pick(4));
        for (int i = 0; i < rounds; ++i)
            mutateOnce(b, corpus);
        if (b.size() > kMaxSize)
            b.resize(kMaxSize);
        return b;
    }

private:
    static constexpr std::size_t kMaxSize = 64 * 1024;

    std::size_t pick(std::size_t n) {
        return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_) : 0;
    }

    // Replaces the decimal number around `at` (or inserts at `at`) by a huge or odd count.
    void insertHugeText(Bytes& b, std::size_t at) {
        const std::string n = kHugeNumbers[pick(std::size(kHugeNumbers))];
        std::size_t begin = at, end = at;
        while (begin > 0 && std::isdigit(b[begin - 1]))
            --begin;
        while (end < b.size() && std::isdigit(b[end]))
            ++end;
        b.erase(b.begin() + begin, b.begin() + end);
        b.insert(b.begin() + begin, n.begin(), n.end());
    }

    // Overwrites 4 or 8 bytes with a huge binary integer or float (binary PLY/VTK counts).
    void insertHugeBinary(Bytes& b, std::size_t at) {
        const uint64_t values[] = {0xFFFFFFFFu,         0x7FFFFFFFu,         0x80000000u, 0x0BEBC200u,
                                   0x7F800000u /*inf*/, 0x7FC00000u /*nan*/, 0x7149F2CAu /*1e30f*/};
        const uint64_t v = values[pick(std::size(values))];
        const std::size_t width = pick(2) ? 4 : 8;
        for (std::size_t k = 0; k < width && at + k < b.size(); ++k)
            b[at + k] = static_cast<uint8_t>(pick(2) ? v >> (8 * k) : v >> (8 * (width - 1 - k)));
    }

    void mutateOnce(Bytes& b, const std::vector<Bytes>& corpus) {
        if (b.empty()) {
            b.push_back(static_cast<uint8_t>(pick(256)));
            return;
        }
        const std::size_t at = pick(b.size());
        switch (pick(9)) {
        case 0:
            b[at] ^= static_cast<uint8_t>(1u << pick(8));
            break; // bit flip
        case 1:
            b[at] = static_cast<uint8_t>(pick(256));
            break; // random byte
        case 2:
            b.resize(at);
            break; // truncate
        case 3:
            insertHugeText(b, at);
            break; // ASCII count
        case 4:
            insertHugeBinary(b, at);
            break; // binary count
        case 5:
            b.erase(b.begin() + at, b.begin() + std::min(b.size(), at + 1 + pick(16)));
            break;
        case 6:
            b.insert(b.begin() + at, b.begin() + at, b.begin() + std::min(b.size(), at + 1 + pick(64)));
            break; // duplicate a chunk
        case 7: {  // splice: the head of this input, the tail of another
            const Bytes& other = corpus[pick(corpus.size())];
            const std::size_t from = pick(other.size() + 1);
            b.resize(at);
            b.insert(b.end(), other.begin() + from, other.end());
            break;
        }
        default:
            b.insert(b.begin() + at, static_cast<uint8_t>("\n \t0-.e{}[]\":,"[pick(14)]));
            break;
        }
    }

    std::mt19937_64 rng_;
};

} // namespace

// One allocation above the limit is a finding, as libFuzzer's -malloc_limit_mb. new/delete
// are replaced as a set (malloc/free underneath, so ASan still checks every access). clang's
// ThreadSanitizer links its own new/delete statically (a second definition does not link), so a
// clang TSan build replays without the allocation limit.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OCTO_FUZZ_NO_NEW_LIMIT 1
#endif
#endif
#ifndef OCTO_FUZZ_NO_NEW_LIMIT
void* operator new(std::size_t size) {
    if (size > g_mallocLimit && g_current) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "one allocation of %zu bytes, above OCTO_FUZZ_MALLOC_LIMIT_MB", size);
        saveCurrentInput(msg);
        std::_Exit(4);
    }
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    return operator new(size);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
#endif

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s NAME SEED_FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    g_name = argv[1];
    const double seconds = envNumber("OCTO_FUZZ_SECONDS", 6);
    const auto seed = static_cast<uint64_t>(envNumber("OCTO_FUZZ_SEED", 1));
    g_mallocLimit = static_cast<std::size_t>(envNumber("OCTO_FUZZ_MALLOC_LIMIT_MB", 256)) << 20;

    std::set_terminate(onTerminate);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
        std::signal(sig, onSignal);
#ifdef OCTO_HAVE_SANITIZER
    __sanitizer_set_death_callback([] { saveCurrentInput("sanitizer report"); });
#endif
    std::thread(watchdog, envNumber("OCTO_FUZZ_INPUT_TIMEOUT", 60)).detach();

    const std::vector<Bytes> corpus = loadSeeds(argc, argv);
    for (const Bytes& s : corpus)
        runOne(s);
    std::printf("fuzz_replay %s: %zu seed inputs replayed clean\n", g_name.c_str(), corpus.size());

    Mutator mutator(seed);
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    std::size_t runs = 0;
    while (Clock::now() < end && !corpus.empty()) {
        const Bytes input = mutator.mutate(corpus);
        runOne(input);
        ++runs;
    }
    std::printf("fuzz_replay %s: %zu mutated inputs in %.0f s clean (OCTO_FUZZ_SEED=%llu)\n", g_name.c_str(),
                runs, seconds, static_cast<unsigned long long>(seed));
    return 0;
}
