// The HTML report in a real browser: `collect report DIR` on a saved measurement with data for
// every table and plot (and hostile names), then Debian's headless Chromium renders the file and
// dumps the DOM it built. Checks: it loads without console errors or blocked resources, shows
// the title, every summary table and every plot, and user strings stay text.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "store/measurement_io.h"
#include "export/report_plots.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` in its own process group with stdout/stderr to files; kills the whole group
// after `timeout` or once it exits (Chromium leaves helper processes behind).
Outcome RunInProcessGroup(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  const std::string out_path = TempDir() + "/child.out";
  const std::string err_path = TempDir() + "/child.err";
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    dup2(out, 1);
    dup2(err, 2);
    dup2(in, 0);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  Outcome outcome;
  if (pid < 0) return outcome;
  setpgid(pid, pid);  // Also from the parent, so the group exists before any kill.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  if (!exited) waitpid(pid, &status, 0);
  outcome.exit_code = exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.out = ReadFile(out_path);
  outcome.err = ReadFile(err_path);
  return outcome;
}

TEST(HtmlReportBrowserTest, ChromiumRendersTitleTablesAndEveryPlot) {
  struct stat info;
  ASSERT_EQ(stat(kChromium, &info), 0) << "Debian's chromium is missing: ./bazelw installs it";

  const v1::Measurement measurement = testing_export::RichMeasurement();
  const absl::StatusOr<std::string> saved =
      SaveMeasurement(measurement, TempDir() + "/runs", "rich");
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string report = TempDir() + "/rich report.html";
  const Outcome collect = RunInProcessGroup(
      {absl::StrCat(std::getenv("TEST_SRCDIR"), "/roastcoffea/tools/collect"), "report", *saved,
       "--html_output=" + report},
      std::chrono::seconds(30));
  ASSERT_EQ(collect.exit_code, 0) << collect.err;
  EXPECT_TRUE(absl::StrContains(collect.out, "HTML report written to " + report)) << collect.out;

  const std::string profile = TempDir() + "/chromium-profile";
  ASSERT_EQ(mkdir(profile.c_str(), 0700), 0);
  setenv("HOME", TempDir().c_str(), 1);
  const Outcome chromium = RunInProcessGroup(
      {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
       "--disable-component-update", "--disable-sync", "--no-first-run",
       "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
       "--user-data-dir=" + profile, "--dump-dom", "file://" + report},
      std::chrono::seconds(50));
  ASSERT_EQ(chromium.exit_code, 0) << chromium.err;
  const std::string& dom = chromium.out;
  ASSERT_TRUE(absl::StrContains(dom, "</html>")) << dom.substr(0, 2000) << chromium.err;

  // Loaded without errors: no console error, nothing blocked by the page's CSP.
  EXPECT_FALSE(absl::StrContains(chromium.err, "Uncaught")) << chromium.err;
  EXPECT_FALSE(absl::StrContains(chromium.err, "Refused to")) << chromium.err;
  EXPECT_FALSE(absl::StrContains(chromium.err, "ERR_FILE_NOT_FOUND")) << chromium.err;

  // The title, escaped (the name is "<script>alert('x')</script> & \"run\"").
  EXPECT_TRUE(absl::StrContains(dom, "<title>roastcoffea report: &lt;script&gt;alert('x')&lt;/script&gt; &amp; \"run\"</title>"))
      << dom.substr(0, 1500);
  EXPECT_FALSE(absl::StrContains(dom, "<script"));
  EXPECT_FALSE(absl::StrContains(dom, "<b>worker"));
  // Every table.
  for (const char* title : {"CPU Efficiency", "Throughput Metrics", "Event Processing Metrics",
                            "Resource Utilization", "Timing Breakdown",
                            "Thread Time Split (worker threads' CPU clocks)", "Chunk Metrics",
                            "Failed Chunks"}) {
    EXPECT_TRUE(absl::StrContains(dom, absl::StrCat("<caption>", title, "</caption>"))) << title;
  }
  EXPECT_TRUE(absl::StrContains(dom, "<td>Total Events</td>"));
  // Every plot, as an SVG element in its figure.
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  ASSERT_EQ(plots.size(), 22u);
  for (const ReportPlot& plot : plots) {
    const size_t figure = dom.find("id=\"plot-" + plot.id + "\"");
    ASSERT_NE(figure, std::string::npos) << plot.id;
    EXPECT_EQ(dom.find("<svg", figure), dom.find("<svg", figure)) << plot.id;
    EXPECT_LT(dom.find("<svg", figure), dom.find("</figure>", figure)) << plot.id;
  }
  EXPECT_EQ(Count(dom, "<svg"), static_cast<int>(plots.size()));
  EXPECT_EQ(Count(dom, "</svg>"), static_cast<int>(plots.size()));
  EXPECT_TRUE(absl::StrContains(dom, "Worker Count Over Time"));
  EXPECT_TRUE(absl::StrContains(dom, "Chunks per Worker Thread"));
}

}  // namespace
}  // namespace roastcoffea
