// Test shim (LD_PRELOAD): steps the wall clock. Once CLOCK_STEP_AFTER_SECONDS of monotonic time
// have passed since the process first read a clock, CLOCK_REALTIME (and gettimeofday, time)
// read CLOCK_STEP_SECONDS later (negative: earlier), as after an NTP step or an administrator's
// `date -s`. The monotonic clocks are left alone: they are what deadlines must use.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*ClockGettime)(clockid_t, struct timespec*);

static ClockGettime RealClockGettime(void) {
  static ClockGettime real = NULL;
  if (real == NULL) real = (ClockGettime)dlsym(RTLD_NEXT, "clock_gettime");
  return real;
}

static double EnvSeconds(const char* name, double fallback) {
  const char* value = getenv(name);
  return value != NULL ? atof(value) : fallback;
}

static long long StepNanoseconds(void) {
  static double first = -1;
  struct timespec now;
  RealClockGettime()(CLOCK_MONOTONIC, &now);
  const double t = (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
  if (first < 0) first = t;
  if (t - first < EnvSeconds("CLOCK_STEP_AFTER_SECONDS", 1)) return 0;
  return (long long)(EnvSeconds("CLOCK_STEP_SECONDS", 0) * 1e9);
}

int clock_gettime(clockid_t clock, struct timespec* out) {
  const int result = RealClockGettime()(clock, out);
  if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    const long long ns = (long long)out->tv_sec * 1000000000LL + out->tv_nsec + StepNanoseconds();
    out->tv_sec = (time_t)(ns / 1000000000LL);
    out->tv_nsec = (long)(ns % 1000000000LL);
  }
  return result;
}

int gettimeofday(struct timeval* out, void* zone) {
  (void)zone;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  out->tv_sec = now.tv_sec;
  out->tv_usec = now.tv_nsec / 1000;
  return 0;
}

time_t time(time_t* out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (out != NULL) *out = now.tv_sec;
  return now.tv_sec;
}
