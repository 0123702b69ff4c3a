#pragma once
// Reading a whole input file with a bound: only regular files (not /dev/zero, a FIFO or a
// directory) and at most `maxBytes`, checked against the file's size before anything is read.
#include <cstdint>
#include <string>

namespace octo {

/// The contents of `path`. Throws octo::FileFormatError ("<path>: ...") when the file cannot be
/// opened, is not a regular file, is larger than maxBytes (`what` names the kind of file in the
/// message) or cannot be read completely.
std::string readRegularFile(const std::string& path, uint64_t maxBytes, const std::string& what);

/// Human-readable byte count for messages ("16 MiB", "2.5 GiB", "812 bytes").
std::string byteText(uint64_t bytes);

} // namespace octo
