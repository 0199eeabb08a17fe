// The HTML report in a real browser: `collect report DIR` on a saved measurement with data for
// every table and plot (and hostile names), then Debian's headless Chromium renders the file and
// dumps the DOM it built. Checks: it loads without console errors or blocked resources, shows
// the title, every summary table and every plot, and user strings stay text; at 1400 px and
// 800 px wide nothing is wider than the window; a report of 100,000 chunks stays small and
// lays out as well. Offline: the page has no external resource.
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
#include "absl/strings/str_replace.h"
#include "export/html_report.h"
#include "export/report_plots.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

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

std::vector<std::string> ChromiumArgs(const std::string& profile) {
  return {kChromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
          "--disable-dev-shm-usage",
          "--hide-scrollbars",
          "--enable-logging=stderr",
          "--v=0",
          "--user-data-dir=" + profile};
}

// The layout of `html` at `width` px: a copy of the page with a script (the report's CSP
// forbids scripts, so the copy drops it) that writes the document's scroll width, the window's
// width and every element sticking out of the window into the DOM that Chromium dumps.
struct Layout {
  int scroll_width = -1;
  int window_width = -1;
  std::string overflowing;  // "tag#id.class right=N" entries
  std::string chromium_err;
};

Layout MeasureLayout(const std::string& html, int width, const std::string& name) {
  std::string page = absl::StrReplaceAll(
      html, {{"<meta http-equiv=\"Content-Security-Policy\"", "<meta name=\"csp-removed\""}});
  page = absl::StrReplaceAll(page, {{"</body>", R"js(<script>
(function() {
  var out = [];
  var all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; ++i) {
    var e = all[i];
    if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth + 0.5) {
      out.push(e.tagName + '#' + e.id + '.' + (e.getAttribute('class') || '') +
               ' right=' + Math.round(r.right));
    }
  }
  var p = document.createElement('pre');
  p.id = 'layout';
  p.textContent = 'scrollWidth=' + document.documentElement.scrollWidth + ';innerWidth=' +
      window.innerWidth + ';overflowing=' + out.slice(0, 10).join('|') + ';end';
  document.body.appendChild(p);
})();
</script></body>)js"}});
  const std::string path = absl::StrCat(TempDir(), "/", name, "-", width, ".html");
  {
    std::ofstream out(path);
    out << page;
  }
  const std::string profile = absl::StrCat(TempDir(), "/profile-", name, "-", width);
  mkdir(profile.c_str(), 0700);
  std::vector<std::string> args = ChromiumArgs(profile);
  args.push_back(absl::StrCat("--window-size=", width, ",900"));
  args.push_back("--dump-dom");
  args.push_back("file://" + path);
  const Outcome chromium = RunInProcessGroup(args, std::chrono::seconds(90));
  Layout layout;
  layout.chromium_err = chromium.err;
  // The script's own text holds the same words: read the element it added.
  const size_t element = chromium.out.find("<pre id=\"layout\">");
  if (element == std::string::npos) return layout;
  const size_t at = chromium.out.find("scrollWidth=", element);
  if (at == std::string::npos) return layout;
  const std::string text = chromium.out.substr(at, chromium.out.find(";end", at) - at);
  layout.scroll_width = std::atoi(text.c_str() + 12);
  const size_t inner = text.find("innerWidth=");
  if (inner != std::string::npos) layout.window_width = std::atoi(text.c_str() + inner + 11);
  const size_t overflowing = text.find("overflowing=");
  if (overflowing != std::string::npos) layout.overflowing = text.substr(overflowing + 12);
  return layout;
}

void ExpectNothingOverflows(const std::string& html, const std::string& name) {
  for (int width : {1400, 800}) {
    const Layout layout = MeasureLayout(html, width, name);
    ASSERT_GT(layout.scroll_width, 0)
        << name << " at " << width << " px: " << layout.chromium_err.substr(0, 2000);
    EXPECT_EQ(layout.window_width, width) << name;
    EXPECT_LE(layout.scroll_width, layout.window_width)
        << name << " at " << width << " px: " << layout.overflowing;
    EXPECT_EQ(layout.overflowing, "") << name << " at " << width << " px";
  }
}

// `chunks` chunk records over 8 worker threads and 3 datasets, ~10 ms each, with sections.
v1::Measurement ManyChunks(int chunks) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  measurement.clear_chunks();
  constexpr int64_t kStart = 1767268800LL * 1000000000LL;
  for (int i = 0; i < chunks; ++i) {
    v1::ChunkRecord& chunk = *measurement.add_chunks();
    chunk.set_worker("node1:4242");
    chunk.set_thread_index(i % 8);
    chunk.set_dataset(i % 3 == 0 ? "ttbar" : i % 3 == 1 ? "wjets" : "data");
    chunk.set_file(absl::StrCat("/store/file", i / 100, ".root"));
    chunk.set_entry_start((i % 100) * 1000);
    chunk.set_entry_stop((i % 100) * 1000 + 1000);
    chunk.set_events(1000);
    const int64_t start = kStart + (i / 8) * 11'000'000LL;
    chunk.set_start_unix_ns(start);
    chunk.set_end_unix_ns(start + 10'000'000LL + (i % 5) * 100'000LL);
    chunk.set_duration_seconds(0.010 + (i % 5) * 1e-4);
    chunk.set_compressed_bytes_read(400000 + i % 1000);
    v1::SectionSlice& slice = *chunk.add_slices();
    slice.set_name("select");
    slice.set_duration_ns(4'000'000);
  }
  return measurement;
}

TEST(HtmlReportBrowserTest, NothingOverflowsAt1400And800Pixels) {
  struct stat info;
  ASSERT_EQ(stat(kChromium, &info), 0) << "Debian's chromium is missing: ./bazelw installs it";
  setenv("HOME", TempDir().c_str(), 1);
  ExpectNothingOverflows(RenderHtmlReport(testing_export::RichMeasurement()), "rich");
}

TEST(HtmlReportBrowserTest, HundredThousandChunksStaySmallAndFit) {
  struct stat info;
  ASSERT_EQ(stat(kChromium, &info), 0) << "Debian's chromium is missing: ./bazelw installs it";
  setenv("HOME", TempDir().c_str(), 1);
  const std::string html = RenderHtmlReport(ManyChunks(100000));
  // Bounded: the chunks are drawn in time bins and sampled, not one element each.
  EXPECT_LT(html.size(), 2'000'000u);
  EXPECT_TRUE(absl::StrContains(html, "100,000 chunks, drawn in"));
  ExpectNothingOverflows(html, "many");
}

TEST(HtmlReportBrowserTest, ChromiumRendersTitleTablesAndEveryPlot) {
  struct stat info;
  ASSERT_EQ(stat(kChromium, &info), 0) << "Debian's chromium is missing: ./bazelw installs it";

  const v1::Measurement measurement = testing_export::RichMeasurement();
  const absl::StatusOr<std::string> saved =
      SaveMeasurement(measurement, TempDir() + "/runs", "rich");
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string report = TempDir() + "/rich report.html";
  const Outcome collect =
      RunInProcessGroup({absl::StrCat(std::getenv("TEST_SRCDIR"), "/roastcoffea/tools/collect"),
                         "report", *saved, "--html_output=" + report},
                        std::chrono::seconds(30));
  ASSERT_EQ(collect.exit_code, 0) << collect.err;
  EXPECT_TRUE(absl::StrContains(collect.out, "HTML report written to " + report)) << collect.out;

  const std::string profile = TempDir() + "/chromium-profile";
  ASSERT_EQ(mkdir(profile.c_str(), 0700), 0);
  setenv("HOME", TempDir().c_str(), 1);
  std::vector<std::string> args = ChromiumArgs(profile);
  args.push_back("--dump-dom");
  args.push_back("file://" + report);
  const Outcome chromium = RunInProcessGroup(args, std::chrono::seconds(50));
  ASSERT_EQ(chromium.exit_code, 0) << chromium.err;
  const std::string& dom = chromium.out;
  ASSERT_TRUE(absl::StrContains(dom, "</html>")) << dom.substr(0, 2000) << chromium.err;

  // Loaded without errors: no console error, nothing blocked by the page's CSP.
  EXPECT_FALSE(absl::StrContains(chromium.err, "Uncaught")) << chromium.err;
  EXPECT_FALSE(absl::StrContains(chromium.err, "Refused to")) << chromium.err;
  EXPECT_FALSE(absl::StrContains(chromium.err, "ERR_FILE_NOT_FOUND")) << chromium.err;

  // The title, escaped (the name is "<script>alert('x')</script> & \"run\"").
  EXPECT_TRUE(absl::StrContains(
      dom,
      "<title>roastcoffea report: &lt;script&gt;alert('x')&lt;/script&gt; &amp; \"run\"</title>"))
      << dom.substr(0, 1500);
  EXPECT_FALSE(absl::StrContains(dom, "<script"));
  EXPECT_FALSE(absl::StrContains(dom, "<b>worker"));
  // Every table.
  for (const char* title :
       {"CPU Efficiency", "Throughput Metrics", "Event Processing Metrics", "Resource Utilization",
        "Timing Breakdown", "Thread Time Split (worker threads' CPU clocks)", "Chunk Metrics",
        "Failed Chunks"}) {
    EXPECT_TRUE(absl::StrContains(dom, absl::StrCat("<caption>", title, "</caption>"))) << title;
  }
  EXPECT_TRUE(absl::StrContains(dom, "<td>Total Events</td>"));
  // Every plot, as an SVG element in its figure.
  // Every plot, as an SVG element in its figure, or as its sentence.
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  ASSERT_EQ(plots.size(), 18u);
  int drawn = 0;
  for (const ReportPlot& plot : plots) {
    const size_t figure = dom.find("id=\"plot-" + plot.id + "\"");
    ASSERT_NE(figure, std::string::npos) << plot.id;
    if (plot.svg.empty()) continue;
    ++drawn;
    EXPECT_LT(dom.find("<svg", figure), dom.find("</figure>", figure)) << plot.id;
  }
  EXPECT_EQ(Count(dom, "<svg"), drawn);
  EXPECT_EQ(Count(dom, "</svg>"), drawn);
  EXPECT_TRUE(absl::StrContains(dom, "Worker Count Over Time"));
  EXPECT_TRUE(absl::StrContains(dom, "Chunks per Worker Thread"));
}

}  // namespace
}  // namespace roastcoffea
