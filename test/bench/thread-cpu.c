/*
 * The CPU time of the calling thread, for the CPU-per-request bench (10 §6,
 * decision 205): `threadCpuMs()` is clock_gettime(CLOCK_THREAD_CPUTIME_ID) in
 * milliseconds. Node 20 has no thread clock of its own (`process.cpuUsage()`
 * is the whole process's: it also counts V8's background compiler threads,
 * which are not the request's thread). Built by test/bench/thread-clock.ts
 * with the machine's C compiler against Node's own headers; a Node-API
 * addon, so it loads in any Node of the same ABI family.
 */
#include <node_api.h>
#include <time.h>

static napi_value ThreadCpuMs(napi_env env, napi_callback_info info) {
  (void)info;
  struct timespec now;
  napi_value result;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) {
    napi_throw_error(env, NULL, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    return NULL;
  }
  napi_create_double(env, (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value function;
  napi_create_function(env, "threadCpuMs", NAPI_AUTO_LENGTH, ThreadCpuMs, NULL, &function);
  napi_set_named_property(env, exports, "threadCpuMs", function);
  return exports;
}
