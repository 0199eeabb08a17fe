#include "export/flame_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "export/svg_plot.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"

namespace roastcoffea {
namespace {

constexpr double kMargin = 10;
constexpr double kFontSize = 11;
// Average advance of a sans-serif character at kFontSize, for eliding labels to a frame.
constexpr double kCharWidth = 0.59 * kFontSize;
// Hover titles keep at most this many characters of a label (C++ template names can be
// kilobytes long; the size of the SVG stays bounded).
constexpr size_t kMaxTitleChars = 400;

std::string Num(double value) { return absl::StrFormat("%.2f", value); }

// Number of UTF-8 code points (continuation bytes not counted).
size_t CodePoints(absl::string_view text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// The first `keep` code points of `text`.
absl::string_view PrefixCodePoints(absl::string_view text, size_t keep) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == keep) return text.substr(0, i);
      ++seen;
    }
  }
  return text;
}

// `text` cut to `max_chars` code points, ending in ".." when cut; "" when fewer than two of
// its characters would be left.
std::string Elide(absl::string_view text, size_t max_chars) {
  if (CodePoints(text) <= max_chars) return std::string(text);
  if (max_chars < 4) return "";
  return absl::StrCat(PrefixCodePoints(text, max_chars - 2), "..");
}

std::string Samples(int64_t samples) {
  return absl::StrCat(samples, samples == 1 ? " sample" : " samples");
}

std::string Title(absl::string_view label, const ProfileNodeStats& node) {
  return absl::StrFormat("%s \u2014 %s (%.2f %%, %.3f s)", Elide(label, kMaxTitleChars),
                         Samples(node.inclusive_samples), node.inclusive_percent,
                         node.inclusive_seconds);
}

// Highlights frames whose label matches a regular expression (button, Ctrl-F or '/'), shows
// the matched share of the samples (overlapping matches counted once), and the hovered
// frame's title in the details line. Uses only the DOM; no network.
constexpr char kSearchScript[] = R"js(<script type="text/ecmascript"><![CDATA[
(function () {
  var script = document.currentScript;
  var svg = (script && script.ownerSVGElement) || document.documentElement;
  var frames = svg.querySelectorAll("g.frame");
  var details = svg.querySelector(".details");
  var matchedText = svg.querySelector(".matched");
  var button = svg.querySelector(".search-button");
  var plotWidth = Number(svg.getAttribute("data-plot-width"));
  var active = false;
  function label(frame) {
    var title = frame.querySelector("title").textContent;
    var cut = title.lastIndexOf(" \u2014 ");
    return cut < 0 ? title : title.substring(0, cut);
  }
  function onOver() { details.textContent = this.querySelector("title").textContent; }
  function onOut() { details.textContent = " "; }
  for (var i = 0; i < frames.length; i++) {
    frames[i].addEventListener("mouseover", onOver);
    frames[i].addEventListener("mouseout", onOut);
  }
  function reset() {
    for (var i = 0; i < frames.length; i++) frames[i].querySelector("rect").style.fill = "";
    matchedText.textContent = " ";
    button.textContent = "Search";
    active = false;
  }
  function search(term) {
    var re;
    try { re = new RegExp(term); } catch (e) { details.textContent = "Bad regex: " + e.message; return; }
    var spans = [];
    for (var i = 0; i < frames.length; i++) {
      var rect = frames[i].querySelector("rect");
      if (!re.test(label(frames[i]))) { rect.style.fill = ""; continue; }
      rect.style.fill = "rgb(230,0,230)";
      var x = Number(rect.getAttribute("x"));
      spans.push([x, x + Number(rect.getAttribute("width"))]);
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -Infinity;
    for (var j = 0; j < spans.length; j++) {
      var start = Math.max(spans[j][0], end);
      if (spans[j][1] > start) covered += spans[j][1] - start;
      end = Math.max(end, spans[j][1]);
    }
    matchedText.textContent = "Matched: " + (100 * covered / plotWidth).toFixed(1) + "%";
    button.textContent = "Reset search";
    active = true;
  }
  function ask() {
    if (active) { reset(); return; }
    var term = window.prompt("Highlight frames matching (regular expression):", "");
    if (term) search(term);
  }
  button.addEventListener("click", ask);
  window.addEventListener("keydown", function (e) {
    if ((e.ctrlKey && e.key === "f") || e.key === "/") { e.preventDefault(); ask(); }
  });
})();
]]></script>
)js";

std::string Open(const FlameGraphOptions& options, double height, int64_t total_samples,
                 double plot_width) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame-graph\" width=\"%d\" "
      "height=\"%s\" viewBox=\"0 0 %d %s\" role=\"img\" font-family=\"sans-serif\" "
      "font-size=\"%s\" data-total-samples=\"%d\" data-plot-width=\"%s\">\n"
      "<title>%s</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf6\"/>\n"
      "<text class=\"chart-title\" x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" "
      "font-weight=\"bold\">%s</text>\n",
      options.width, Num(height), options.width, Num(height), Num(kFontSize), total_samples,
      Num(plot_width), XmlEscape(options.title), options.width / 2, XmlEscape(options.title));
}

// The subtitle's line, "" without one.
std::string SubtitleLine(const FlameGraphOptions& options) {
  if (options.subtitle.empty()) return "";
  return absl::StrCat("<text class=\"subtitle\" x=\"", options.width / 2,
                      "\" y=\"38\" text-anchor=\"middle\">", XmlEscape(options.subtitle),
                      "</text>\n");
}

// Collapsed (unless wrapper frames are shown) and merged with itself: nodes with the same
// path of labels become one.
absl::StatusOr<v1::Profile> MergedForDrawing(const v1::Profile& profile,
                                             const FlameGraphOptions& options) {
  // Collapsed only when there is something to collapse (no copy otherwise).
  const v1::Profile* source = &profile;
  absl::StatusOr<v1::Profile> collapsed;
  if (!options.show_wrapper_frames && HasWrapperFrames(profile)) {
    collapsed = CollapseWrapperFrames(profile);
    if (!collapsed.ok()) return collapsed.status();
    source = &*collapsed;
  }
  return MergeProfiles(absl::MakeConstSpan(source, 1));
}

// The labels of the nodes' frames: the full one (hover titles, the search, the order of
// siblings), the short one (boxes) and the colour. One of each per frame, not per node
// (frames are shared by many nodes; hashing a label per box multiplied it by the depth);
// short labels and colours made only for the frames drawn.
class FrameLabels {
 public:
  FrameLabels(const v1::Profile& merged, const std::vector<ProfileNodeStats>& nodes)
      : merged_(merged), frame_of_(nodes.size()) {
    full_.reserve(merged.frames_size() + 2);
    for (const v1::ProfileFrame& frame : merged.frames()) full_.push_back(FrameLabel(frame));
    const size_t root = full_.size();
    full_.push_back("all");
    full_.push_back("?");
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int frame = nodes[i].frame;
      frame_of_[i] = i == 0                                       ? root
                     : frame >= 0 && frame < merged.frames_size() ? static_cast<size_t>(frame)
                                                                  : root + 1;
    }
    short_.resize(full_.size());
    short_made_.resize(full_.size(), 0);
    colors_.resize(full_.size());
  }

  const std::string& Full(size_t node) const { return full_[frame_of_[node]]; }

  const std::string& Short(size_t node) {
    const size_t index = frame_of_[node];
    if (!short_made_[index]) {
      short_made_[index] = 1;
      short_[index] = index < static_cast<size_t>(merged_.frames_size())
                          ? ShortFrameLabel(merged_.frames(static_cast<int>(index)))
                          : full_[index];
    }
    return short_[index];
  }

  const std::string& Color(size_t node) {
    const size_t index = frame_of_[node];
    if (colors_[index].empty()) colors_[index] = FlameColor(Short(node));
    return colors_[index];
  }

 private:
  const v1::Profile& merged_;
  std::vector<std::string> full_;
  std::vector<size_t> frame_of_;  // node -> index in full_
  std::vector<std::string> short_;
  std::vector<char> short_made_;
  std::vector<std::string> colors_;
};

// Children of each node in compressed rows: those of node i are
// children[first[i]..first[i + 1]).
struct ChildLists {
  std::vector<size_t> first;
  std::vector<int> children;
};

// Ordered by label like flamegraph.pl.
ChildLists SortedChildren(const std::vector<ProfileNodeStats>& nodes, const FrameLabels& labels) {
  const size_t n = nodes.size();
  ChildLists lists;
  lists.first.assign(n + 1, 0);
  for (size_t i = 1; i < n; ++i) ++lists.first[nodes[i].parent + 1];
  std::partial_sum(lists.first.begin(), lists.first.end(), lists.first.begin());
  lists.children.resize(n > 0 ? n - 1 : 0);
  std::vector<size_t> fill(lists.first.begin(), lists.first.end() - 1);
  for (size_t i = 1; i < n; ++i) lists.children[fill[nodes[i].parent]++] = static_cast<int>(i);
  for (size_t i = 0; i < n; ++i) {
    std::sort(lists.children.begin() + lists.first[i], lists.children.begin() + lists.first[i + 1],
              [&](int a, int b) {
                const int order = labels.Full(a).compare(labels.Full(b));
                return order != 0 ? order < 0 : a < b;
              });
  }
  return lists;
}

// The nodes in pre-order over the sorted children, so the output depends on the labels only,
// not on the order of the engine's nodes; each node's left edge in samples.
struct FrameLayout {
  std::vector<int> order;
  std::vector<size_t> position;  // node -> index in order
  std::vector<int64_t> offset;   // node -> left edge, in samples
};

FrameLayout LayOut(const std::vector<ProfileNodeStats>& nodes, const ChildLists& lists) {
  const size_t n = nodes.size();
  FrameLayout layout;
  layout.order.reserve(n);
  layout.position.assign(n, 0);
  layout.offset.assign(n, 0);
  std::vector<int> pending = {0};  // an explicit stack: trees may be deep
  while (!pending.empty()) {
    const int i = pending.back();
    pending.pop_back();
    layout.position[i] = layout.order.size();
    layout.order.push_back(i);
    int64_t next = layout.offset[i];
    for (size_t c = lists.first[i]; c < lists.first[i + 1]; ++c) {
      layout.offset[lists.children[c]] = next;
      next += nodes[lists.children[c]].inclusive_samples;
    }
    for (size_t c = lists.first[i + 1]; c-- > lists.first[i];) {
      pending.push_back(lists.children[c]);
    }
  }
  return layout;
}

struct DrawnFrames {
  std::vector<int> nodes;  // in pre-order
  int max_depth = 0;
  int64_t hidden = 0;  // frames with samples left out
};

// Which frames to draw: wide and shallow enough, their caller drawn, at most the
// `max_frames` widest.
DrawnFrames ChooseFrames(const std::vector<ProfileNodeStats>& nodes, const FrameLayout& layout,
                         double scale, const FlameGraphOptions& options) {
  std::vector<char> drawn(nodes.size(), 0);
  DrawnFrames frames;
  std::vector<int>& candidates = frames.nodes;
  for (int i : layout.order) {
    const bool visible =
        i == 0 || (nodes[i].inclusive_samples > 0 && drawn[nodes[i].parent] &&
                   nodes[i].depth <= options.max_depth &&
                   nodes[i].inclusive_samples * scale >= options.min_frame_width_px);
    if (!visible) continue;
    drawn[i] = 1;
    candidates.push_back(i);
  }
  const size_t max_frames = static_cast<size_t>(std::max(1, options.max_frames));
  if (candidates.size() > max_frames) {
    // The widest; a caller is at least as wide as its callee and comes first on ties, so
    // every kept frame keeps its callers.
    std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      return nodes[a].inclusive_samples != nodes[b].inclusive_samples
                 ? nodes[a].inclusive_samples > nodes[b].inclusive_samples
                 : layout.position[a] < layout.position[b];
    });
    for (size_t k = max_frames; k < candidates.size(); ++k) drawn[candidates[k]] = 0;
    candidates.resize(max_frames);
    std::sort(candidates.begin(), candidates.end(),
              [&](int a, int b) { return layout.position[a] < layout.position[b]; });
  }
  for (int i : candidates) frames.max_depth = std::max(frames.max_depth, nodes[i].depth);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!drawn[i] && nodes[i].inclusive_samples > 0) ++frames.hidden;
  }
  return frames;
}

// The line above the frames: samples, seconds, frames drawn and why others are not.
std::string SummaryLine(const FlameGraph& graph, const ProfileAnalysis& analysis,
                        const FlameGraphOptions& options, double y) {
  std::string summary = absl::StrFormat("%s, %.3f s at %.4g s per sample; %d frames drawn",
                                        Samples(graph.total_samples), analysis.total_seconds,
                                        analysis.seconds_per_sample, graph.drawn_frames);
  if (graph.hidden_frames > 0) {
    absl::StrAppend(&summary, absl::StrFormat(", %d hidden (narrower than %.2g px, deeper than "
                                              "%d levels, or beyond the %d widest)",
                                              graph.hidden_frames, options.min_frame_width_px,
                                              options.max_depth, options.max_frames));
  }
  return absl::StrCat("<text class=\"summary\" x=\"", Num(kMargin), "\" y=\"", Num(y), "\">",
                      XmlEscape(summary), "</text>\n");
}

// One frame's box: its rectangle, its label elided to the box and its hover title.
void AppendFrameBox(const ProfileNodeStats& node, const std::string& label,
                    const std::string& short_label, const std::string& color, double x, double w,
                    double y, const FlameGraphOptions& options, std::string& out) {
  const size_t fit =
      w > 6 ? static_cast<size_t>(std::floor((w - 6) / kCharWidth)) : static_cast<size_t>(0);
  absl::StrAppend(&out, "<g class=\"frame\"><title>", XmlEscape(Title(label, node)),
                  "</title><rect x=\"", Num(x), "\" y=\"", Num(y), "\" width=\"", Num(w),
                  "\" height=\"", options.frame_height - 1, "\" fill=\"", color,
                  "\" rx=\"2\"/><text x=\"", Num(x + 3), "\" y=\"",
                  Num(y + options.frame_height - 4.5), "\">", XmlEscape(Elide(short_label, fit)),
                  "</text></g>\n");
}

}  // namespace

std::string FlameColor(const std::string& label) {
  // FNV-1a, 64 bit: stable across platforms and runs (std::hash is not specified).
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : label) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  const double v1 = static_cast<double>(hash & 0xFF) / 255.0;
  const double v2 = static_cast<double>((hash >> 8) & 0xFF) / 255.0;
  const double v3 = static_cast<double>((hash >> 16) & 0xFF) / 255.0;
  // flamegraph.pl's "hot" palette.
  return absl::StrFormat("rgb(%d,%d,%d)", 205 + static_cast<int>(50 * v3),
                         static_cast<int>(230 * v1), static_cast<int>(55 * v2));
}

absl::StatusOr<FlameGraph> RenderFlameGraph(const v1::Profile& profile,
                                            const FlameGraphOptions& options) {
  absl::StatusOr<v1::Profile> merged = MergedForDrawing(profile, options);
  if (!merged.ok()) return merged.status();
  ProfileAnalysisOptions analysis_options;
  analysis_options.top_stacks = 0;
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(*merged, analysis_options);
  if (!analysis.ok()) return analysis.status();

  FlameGraph graph;
  graph.total_samples = analysis->total_samples;
  const double plot_width = std::max(1.0, options.width - 2 * kMargin);
  const double top = options.subtitle.empty() ? 46 : 62;  // title, subtitle, summary line
  if (graph.total_samples <= 0 || analysis->nodes.empty()) {
    const double height = top + 40;
    graph.svg = absl::StrCat(
        Open(options, height, 0, plot_width), SubtitleLine(options),
        "<text class=\"no-samples\" x=\"", options.width / 2, "\" y=\"", Num(top + 16),
        "\" text-anchor=\"middle\" font-size=\"13\">No samples in this profile</text>\n</svg>\n");
    return graph;
  }

  const std::vector<ProfileNodeStats>& nodes = analysis->nodes;
  FrameLabels labels(*merged, nodes);
  const FrameLayout layout = LayOut(nodes, SortedChildren(nodes, labels));
  const double scale = plot_width / static_cast<double>(graph.total_samples);
  const DrawnFrames frames = ChooseFrames(nodes, layout, scale, options);
  graph.hidden_frames = frames.hidden;
  graph.drawn_frames = static_cast<int64_t>(frames.nodes.size());

  const double levels_height = (frames.max_depth + 1) * options.frame_height;
  const double bottom_line = top + levels_height + 18;
  const double height = bottom_line + 10;
  std::string out = Open(options, height, graph.total_samples, plot_width);
  absl::StrAppend(&out, SubtitleLine(options), SummaryLine(graph, *analysis, options, top - 8));
  if (options.search_script) {
    absl::StrAppend(&out, "<text class=\"search-button\" x=\"", Num(options.width - kMargin),
                    "\" y=\"20\" text-anchor=\"end\" cursor=\"pointer\" fill=\"#06c\">Search"
                    "</text>\n");
  }
  out += "<g class=\"frames\">\n";
  for (int i : frames.nodes) {
    const ProfileNodeStats& node = nodes[i];
    AppendFrameBox(node, labels.Full(i), labels.Short(i), labels.Color(i),
                   kMargin + static_cast<double>(layout.offset[i]) * scale,
                   static_cast<double>(node.inclusive_samples) * scale,
                   top + (frames.max_depth - node.depth) * options.frame_height, options, out);
  }
  out += "</g>\n";
  absl::StrAppend(&out, "<text class=\"details\" x=\"", Num(kMargin), "\" y=\"", Num(bottom_line),
                  "\"> </text>\n");
  absl::StrAppend(&out, "<text class=\"matched\" x=\"", Num(options.width - kMargin), "\" y=\"",
                  Num(bottom_line), "\" text-anchor=\"end\"> </text>\n");
  if (options.search_script) out += kSearchScript;
  out += "</svg>\n";
  graph.svg = std::move(out);
  return graph;
}

}  // namespace roastcoffea
