// A kernel timeline of any CUDA program, for finding where the device waits on the host: loaded by
// the CUDA driver as an injection library (CUDA_INJECTION64_PATH=.../libcupti_timeline.so), it
// records every kernel, copy and memset with its start and end (CUPTI activity API; and, unless
// TIMELINE_NO_API is set, every runtime API call) and writes them as CSV lines "kind,start_ns,
// end_ns,correlation,name" (K kernel, C copy, S memset, R runtime call) to $TIMELINE_OUT at exit.
// perf_tests/timeline_gaps.py summarises the file. Tracing the runtime calls slows them by
// microseconds each; device activities alone barely change the timeline.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Record {
  char kind;
  std::string name;
  unsigned long long start, end;
  unsigned correlation;
};
std::vector<Record> records;
std::mutex records_mutex;
constexpr std::size_t kBufferBytes = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  const std::lock_guard<std::mutex> lock(records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      records.push_back({'K', k->name ? k->name : "?", k->start, k->end, k->correlationId});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      records.push_back({'C', "copy kind " + std::to_string(m->copyKind) + ", " + std::to_string(m->bytes) + " bytes",
                         m->start, m->end, m->correlationId});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
      records.push_back({'S', "memset " + std::to_string(m->bytes) + " bytes", m->start, m->end, m->correlationId});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
      const char* name = nullptr;
      cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name);
      records.push_back({'R', name ? name : "?", a->start, a->end, a->correlationId});
    }
  }
  std::free(buffer);
}

void write_records() {
  cuptiActivityFlushAll(1);
  const char* path = std::getenv("TIMELINE_OUT");
  FILE* f = std::fopen(path ? path : "timeline.csv", "w");
  if (!f) return;
  const std::lock_guard<std::mutex> lock(records_mutex);
  for (const Record& r : records) {
    std::string name = r.name.substr(0, 160);
    for (char& c : name)
      if (c == ',') c = ';';
    std::fprintf(f, "%c,%llu,%llu,%u,%s\n", r.kind, r.start, r.end, r.correlation, name.c_str());
  }
  std::fclose(f);
}

}  // namespace

/// Called by the CUDA driver when it loads this library (CUDA_INJECTION64_PATH).
extern "C" int InitializeInjection() {
  cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  if (!std::getenv("TIMELINE_NO_API")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  std::atexit(write_records);
  return 1;
}
