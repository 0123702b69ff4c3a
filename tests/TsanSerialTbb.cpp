// Linked into every test in -DOCTO_TSAN=ON builds only. libtbb is not built with ThreadSanitizer,
// so the happens-before edges of its scheduler (a parallel_for's tasks finishing before the caller
// continues) are invisible and every parallel loop is reported as a race. With TBB limited to one
// thread the loops run on the thread that calls them, and TSan sees every access exactly: races
// between the GUI thread, the simulation worker, the surface stage and the recorder are still
// found; races between the iterations of one parallel loop are not covered by this build.
#include <tbb/global_control.h>

namespace {
const tbb::global_control serialTbbUnderTsan(tbb::global_control::max_allowed_parallelism, 1);
} // namespace
