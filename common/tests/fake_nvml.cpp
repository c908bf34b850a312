// A stand-in for libnvidia-ml.so.1 with the entry points gpu_state reads, for
// the CPU's tests (test_energy.cpp): one GPU at 0000:3b:00.0 whose counters
// grow at every read, as a throttled unit's with erring memory would.
// KARMA_FAKE_NVML_PARTIAL=1 leaves out every query but the clocks, as an older
// driver's NVML might.
#include <cstdlib>
#include <cstring>

namespace {
int device = 0;
unsigned long long reads = 0;
bool partial() { return std::getenv("KARMA_FAKE_NVML_PARTIAL") != nullptr; }
int text(char* out, unsigned length, const char* value) {
  if (partial() || std::strlen(value) >= length) return 3;  // NVML_ERROR_NOT_SUPPORTED
  std::strcpy(out, value);
  return 0;
}
}  // namespace

extern "C" {
int nvmlInit_v2() { return 0; }
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** dev) {
  if (std::strcmp(bus, "0000:3b:00.0") != 0) return 6;  // NVML_ERROR_NOT_FOUND
  *dev = &device;
  return 0;
}
int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1755 : 3201;
  return 0;
}
int nvmlDeviceGetMaxClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 : 3201;
  return 0;
}
int nvmlDeviceGetApplicationsClock(void*, int type, unsigned* mhz) {
  if (partial()) return 3;
  *mhz = type == 1 ? 1980 : 3201;
  return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) {
  *mw = 700000;
  return 0;
}
int nvmlDeviceGetPersistenceMode(void*, unsigned* on) {
  *on = 1;
  return partial() ? 3 : 0;
}
int nvmlDeviceGetEccMode(void*, unsigned* on, unsigned* pending) {
  *on = *pending = 1;
  return partial() ? 3 : 0;
}
int nvmlDeviceGetTotalEccErrors(void*, int type, int, unsigned long long* n) {
  *n = type == 0 ? 3900000 + 2 * reads++ : 0;
  return partial() ? 3 : 0;
}
struct Violation {
  unsigned long long reference_us, violation_ns;
};
int nvmlDeviceGetViolationStatus(void*, int policy, Violation* t) {
  if (partial() || (policy > 5 && policy != 10 && policy != 11)) return 3;
  t->reference_us = 0;
  t->violation_ns = policy == 0 || policy == 10 ? 250000000ULL * ++reads : 0;
  return 0;
}
int nvmlDeviceGetBoardPartNumber(void*, char* out, unsigned length) {
  return text(out, length, "692-2G520-0282-000");
}
int nvmlDeviceGetVbiosVersion(void*, char* out, unsigned length) {
  return text(out, length, "96.00.AF.00.01");
}
}
