#include "gec/runtime.h"
namespace gec {
const char* version() { return GEC_VERSION; }
}  // namespace gec
