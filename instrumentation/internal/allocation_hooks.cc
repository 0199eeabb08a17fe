#include "instrumentation/internal/allocation_hooks.h"

namespace roastcoffea {
namespace instrumentation_internal {

// Constant-initialised, so it is valid before any static constructor runs.
std::atomic<const AllocationHooks*> g_allocation_hooks{nullptr};

}  // namespace instrumentation_internal
}  // namespace roastcoffea
