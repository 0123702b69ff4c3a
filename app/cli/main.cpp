// octofluid-cli: headless scenes, benchmarks and surface reconstruction.
#include "Command.h"

#include <exception>
#include <iostream>
#include <new>

namespace octo::cli {
std::map<std::string, Command>& commands() {
    static std::map<std::string, Command> registry;
    return registry;
}
} // namespace octo::cli

static void printUsage() {
    std::cout << "usage: octofluid-cli <command> [options]\n\ncommands:\n";
    for (const auto& [name, cmd] : octo::cli::commands())
        std::cout << "  " << cmd.usage << "\n      " << cmd.summary << "\n";
}

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        printUsage();
        return argc < 2 ? 2 : 0;
    }
    const std::string name = argv[1];
    auto it = octo::cli::commands().find(name);
    if (it == octo::cli::commands().end()) {
        std::cerr << "octofluid-cli: unknown command '" << name << "' (try --help)\n";
        return 2;
    }
    try {
        return it->second.run(octo::cli::Args(argv + 2, argv + argc));
    } catch (const std::bad_alloc&) {
        std::cerr << "octofluid-cli " << name << ": error: " << octo::cli::kOutOfMemoryMessage << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "octofluid-cli " << name << ": error: " << e.what() << "\n";
        return 1;
    }
}
