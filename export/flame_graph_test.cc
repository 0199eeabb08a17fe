#include "export/flame_graph.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "export/test_profile.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using NodeSpec = testing_export::ProfileNodeSpec;

v1::Profile Tree(const std::vector<NodeSpec>& nodes, int64_t root_count = 0,
                 double interval = 0.01) {
  return testing_export::ProfileTree(nodes, "threadpool", "w1", root_count, interval);
}

// main(10) -> a(6) -> c(2); main -> b(3). Exclusive: main 1, a 4, b 3, c 2.
v1::Profile KnownTree() { return Tree({{0, "main", 10}, {1, "a", 6}, {1, "b", 3}, {2, "c", 2}}); }

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

std::string Attribute(const std::string& element, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = element.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return element.substr(start, element.find('"', start) - start);
}

struct DrawnFrame {
  std::string title;
  double x = 0, y = 0, width = 0;
  std::string fill;
  std::string text;
};

// Every <g class="frame"> of the SVG, by the label its title starts with.
std::map<std::string, DrawnFrame> Frames(const std::string& svg) {
  std::map<std::string, DrawnFrame> frames;
  const std::string open = "<g class=\"frame\"><title>";
  for (size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    const size_t title_start = at + open.size();
    const size_t title_end = svg.find("</title>", title_start);
    const size_t rect_end = svg.find("/>", title_end);
    const std::string rect = svg.substr(title_end, rect_end - title_end);
    const size_t text_start = svg.find('>', svg.find("<text", rect_end)) + 1;
    DrawnFrame frame;
    frame.title = svg.substr(title_start, title_end - title_start);
    EXPECT_TRUE(absl::SimpleAtod(Attribute(rect, "x"), &frame.x)) << rect;
    EXPECT_TRUE(absl::SimpleAtod(Attribute(rect, "y"), &frame.y)) << rect;
    EXPECT_TRUE(absl::SimpleAtod(Attribute(rect, "width"), &frame.width)) << rect;
    frame.fill = Attribute(rect, "fill");
    frame.text = svg.substr(text_start, svg.find("</text>", text_start) - text_start);
    const std::string label = frame.title.substr(0, frame.title.find(" \u2014 "));
    frames[label] = frame;
  }
  return frames;
}

TEST(FlameGraphTest, OneRectPerFrameWidthsProportionalRootAtBottom) {
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(KnownTree());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->total_samples, 10);
  EXPECT_EQ(graph->drawn_frames, 5);  // all, main, a, b, c
  EXPECT_EQ(graph->hidden_frames, 0);
  EXPECT_EQ(Count(graph->svg, "<g class=\"frame\">"), 5);
  EXPECT_EQ(Count(graph->svg, "<rect "), 6);  // the frames and the background
  EXPECT_TRUE(absl::StartsWith(graph->svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(absl::EndsWith(graph->svg, "</svg>\n"));

  const std::map<std::string, DrawnFrame> frames = Frames(graph->svg);
  ASSERT_EQ(frames.size(), 5u);
  const double full = frames.at("all").width;
  EXPECT_NEAR(full, 1180.0, 0.01);  // width 1200 minus the margins
  EXPECT_NEAR(frames.at("main").width, full, 0.01);
  EXPECT_NEAR(frames.at("a").width, full * 0.6, 0.01);
  EXPECT_NEAR(frames.at("b").width, full * 0.3, 0.01);
  EXPECT_NEAR(frames.at("c").width, full * 0.2, 0.01);
  // Children ordered by label from their parent's left edge: a then b.
  EXPECT_NEAR(frames.at("a").x, frames.at("main").x, 0.01);
  EXPECT_NEAR(frames.at("b").x, frames.at("a").x + frames.at("a").width, 0.01);
  EXPECT_NEAR(frames.at("c").x, frames.at("a").x, 0.01);
  // Root at the bottom: deeper frames are higher up (smaller y), one level apart.
  EXPECT_GT(frames.at("all").y, frames.at("main").y);
  EXPECT_NEAR(frames.at("main").y - frames.at("a").y, 16.0, 0.01);
  EXPECT_NEAR(frames.at("a").y, frames.at("b").y, 0.01);
  EXPECT_NEAR(frames.at("a").y - frames.at("c").y, 16.0, 0.01);
  // Titles: label, samples, percent of the total, seconds.
  EXPECT_EQ(frames.at("a").title, "a \u2014 6 samples (60.00 %, 0.060 s)");
  EXPECT_EQ(frames.at("all").title, "all \u2014 10 samples (100.00 %, 0.100 s)");
  EXPECT_EQ(frames.at("c").title, "c \u2014 2 samples (20.00 %, 0.020 s)");
  EXPECT_EQ(frames.at("main").text, "main");
  // Colours from the label.
  EXPECT_EQ(frames.at("a").fill, FlameColor("a"));
  EXPECT_TRUE(absl::StrContains(graph->svg, "10 samples, 0.100 s"));
  EXPECT_TRUE(absl::StrContains(graph->svg, "5 frames drawn"));
  EXPECT_FALSE(absl::StrContains(graph->svg, "hidden"));
}

TEST(FlameGraphTest, IdenticalPathsAreMerged) {
  // main has two children labelled "a" (the engine's tree split them); one box of 6 samples.
  absl::StatusOr<FlameGraph> graph =
      RenderFlameGraph(Tree({{0, "main", 9}, {1, "a", 4}, {1, "a", 2}, {1, "b", 3}}));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->drawn_frames, 4);
  const std::map<std::string, DrawnFrame> frames = Frames(graph->svg);
  EXPECT_EQ(frames.at("a").title, "a \u2014 6 samples (66.67 %, 0.060 s)");
}

TEST(FlameGraphTest, TitlesAndTextAreEscaped) {
  const std::string name = "std::map<int, std::string>::at & \"x\" 'y'";
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(Tree({{0, name, 5}}));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_FALSE(absl::StrContains(graph->svg, "<int"));
  EXPECT_FALSE(absl::StrContains(graph->svg, "& \""));
  EXPECT_TRUE(absl::StrContains(
      graph->svg,
      "<title>std::map&lt;int, std::string&gt;::at &amp; &quot;x&quot; &#39;y&#39; \u2014 5 "
      "samples (100.00 %, 0.050 s)</title>"))
      << graph->svg;
  FlameGraphOptions options;
  options.title = "<b>t</b>";
  options.subtitle = "worker & <i>";
  graph = RenderFlameGraph(Tree({{0, name, 5}}), options);
  ASSERT_TRUE(graph.ok());
  EXPECT_TRUE(absl::StrContains(graph->svg, "&lt;b&gt;t&lt;/b&gt;"));
  EXPECT_TRUE(absl::StrContains(graph->svg, "worker &amp; &lt;i&gt;"));
  EXPECT_FALSE(absl::StrContains(graph->svg, "<b>"));
}

TEST(FlameGraphTest, LabelsElidedToTheFrameWidth) {
  const std::string long_name(300, 'x');
  // The long frame gets a tenth of the width: 118 px, about 16 characters.
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(Tree({{0, "main", 10}, {1, long_name, 1}}));
  ASSERT_TRUE(graph.ok());
  const std::map<std::string, DrawnFrame> frames = Frames(graph->svg);
  const DrawnFrame& frame = frames.at(long_name);
  EXPECT_TRUE(absl::EndsWith(frame.text, "..")) << frame.text;
  EXPECT_LT(frame.text.size() * 0.59 * 11, frame.width);
  EXPECT_GT(frame.text.size(), 10u);
  // Multi-byte labels are cut between characters.
  std::string wide;
  for (int i = 0; i < 100; ++i) wide += "\u00e9";
  graph = RenderFlameGraph(Tree({{0, "main", 10}, {1, wide, 1}}));
  ASSERT_TRUE(graph.ok());
  const std::string text = Frames(graph->svg).at(wide).text;
  ASSERT_TRUE(absl::EndsWith(text, "..")) << text;
  EXPECT_EQ((text.size() - 2) % 2, 0u) << text;
  EXPECT_TRUE(absl::StartsWith(text, "\u00e9\u00e9"));
}

TEST(FlameGraphTest, ZeroSamplesSaysSo) {
  v1::Profile empty;
  empty.set_sampling_interval_seconds(0.01);
  empty.add_nodes()->set_parent(-1);
  empty.mutable_nodes(0)->set_frame(-1);
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(empty);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->total_samples, 0);
  EXPECT_EQ(graph->drawn_frames, 0);
  EXPECT_TRUE(absl::StrContains(graph->svg, "No samples in this profile"));
  EXPECT_EQ(Count(graph->svg, "<g class=\"frame\">"), 0);
  EXPECT_TRUE(absl::EndsWith(graph->svg, "</svg>\n"));
  // A tree whose nodes all have 0 samples too.
  graph = RenderFlameGraph(Tree({{0, "main", 0}}));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(absl::StrContains(graph->svg, "No samples in this profile"));
}

TEST(FlameGraphTest, NarrowFramesHiddenAndCounted) {
  std::vector<NodeSpec> nodes = {{0, "big", 1000000}};
  for (int i = 0; i < 100; ++i) nodes.push_back({0, absl::StrCat("tiny", i), 1});
  nodes.push_back({101, "tiny99_callee", 1});  // under a hidden frame: hidden too
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(Tree(nodes));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->drawn_frames, 2);  // all, big
  EXPECT_EQ(graph->hidden_frames, 101);
  EXPECT_EQ(Count(graph->svg, "<g class=\"frame\">"), 2);
  EXPECT_TRUE(absl::StrContains(graph->svg, "101 hidden (narrower than 0.1 px")) << graph->svg;
  // With no minimum width they are drawn.
  FlameGraphOptions options;
  options.min_frame_width_px = 0;
  graph = RenderFlameGraph(Tree(nodes), options);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->drawn_frames, 103);
  EXPECT_EQ(graph->hidden_frames, 0);
}

TEST(FlameGraphTest, HugeTreesStayBounded) {
  // 20000 leaves of one sample each, drawn with no minimum width but at most 500 frames.
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 20000; ++i) nodes.push_back({0, absl::StrCat("leaf", i), 1 + (i % 7)});
  FlameGraphOptions options;
  options.min_frame_width_px = 0;
  options.max_frames = 500;
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(Tree(nodes), options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->drawn_frames, 500);
  EXPECT_EQ(graph->hidden_frames, 20001 - 500);
  EXPECT_EQ(Count(graph->svg, "<g class=\"frame\">"), 500);
  EXPECT_LT(graph->svg.size(), 500u * 400u + 10000u);
  // The widest were kept.
  for (const auto& [label, frame] : Frames(graph->svg)) {
    if (label != "all") {
      EXPECT_TRUE(absl::StrContains(frame.title, "7 samples")) << frame.title;
    }
  }

  // A chain 3000 deep: levels above max_depth are not drawn, the height stays bounded.
  std::vector<NodeSpec> chain;
  for (int i = 0; i < 3000; ++i) chain.push_back({i, absl::StrCat("f", i), 1});
  options = FlameGraphOptions();
  options.max_depth = 100;
  graph = RenderFlameGraph(Tree(chain), options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->drawn_frames, 101);
  EXPECT_EQ(graph->hidden_frames, 2900);
  double height = 0;
  ASSERT_TRUE(absl::SimpleAtod(Attribute(graph->svg, "height"), &height));
  EXPECT_LT(height, 101 * 16 + 200);
}

TEST(FlameGraphTest, DeterministicOutputAndColours) {
  absl::StatusOr<FlameGraph> first = RenderFlameGraph(KnownTree());
  absl::StatusOr<FlameGraph> second = RenderFlameGraph(KnownTree());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->svg, second->svg);
  // Node order in the input does not matter, only the labels.
  absl::StatusOr<FlameGraph> reordered =
      RenderFlameGraph(Tree({{0, "main", 10}, {1, "b", 3}, {1, "a", 6}, {3, "c", 2}}));
  ASSERT_TRUE(reordered.ok());
  EXPECT_EQ(reordered->svg, first->svg);
  EXPECT_EQ(FlameColor("std::sort"), FlameColor("std::sort"));
  EXPECT_NE(FlameColor("std::sort"), FlameColor("std::find"));
  int r = 0, g = 0, b = 0;
  ASSERT_EQ(std::sscanf(FlameColor("x").c_str(), "rgb(%d,%d,%d)", &r, &g, &b), 3);
  EXPECT_GE(r, 205);
  EXPECT_LE(r, 255);
  EXPECT_LE(g, 230);
  EXPECT_LE(b, 55);
}

TEST(FlameGraphTest, SearchScriptOptional) {
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(KnownTree());
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(Count(graph->svg, "<script"), 1);
  EXPECT_TRUE(absl::StrContains(graph->svg, "class=\"search-button\""));
  EXPECT_EQ(Count(graph->svg, "]]>"), 1);
  FlameGraphOptions options;
  options.search_script = false;
  graph = RenderFlameGraph(KnownTree(), options);
  ASSERT_TRUE(graph.ok());
  EXPECT_FALSE(absl::StrContains(graph->svg, "<script"));
  EXPECT_FALSE(absl::StrContains(graph->svg, "search-button"));
  EXPECT_EQ(Count(graph->svg, "<title>"), 6);  // the image and its 5 frames: hover still works
}

TEST(FlameGraphTest, BoxesShowShortNamesTitlesFullOnes) {
  const std::string full = "double ns::Dijet<4>(ns::Jets const&)";
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(Tree({{0, full, 5}}));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_NE(graph->svg.find(">ns::Dijet</text>"), std::string::npos) << graph->svg;
  EXPECT_NE(graph->svg.find("<title>double ns::Dijet&lt;4&gt;(ns::Jets const&amp;) \u2014 5"),
            std::string::npos)
      << graph->svg;
}

TEST(FlameGraphTest, WrapperFramesCollapsedUnlessAsked) {
  const v1::Profile profile = Tree({{0, "start_thread", 5},
                                    {1, "roastcoffea::ThreadPoolExecutor::WorkerLoop(int)", 5},
                                    {2, "ns::Process()", 5}});
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(profile);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->svg.find("WorkerLoop"), std::string::npos);
  EXPECT_EQ(graph->drawn_frames, 2);  // all, ns::Process
  FlameGraphOptions options;
  options.show_wrapper_frames = true;
  graph = RenderFlameGraph(profile, options);
  ASSERT_TRUE(graph.ok());
  EXPECT_NE(graph->svg.find("WorkerLoop"), std::string::npos);
  EXPECT_EQ(graph->drawn_frames, 4);
}

// Issue #16: one frame with a 1 MB name at each of 240 levels (a Dask tree). Every box's
// title and text come from the cut label, so the SVG grows with the depth, not the name.
TEST(FlameGraphTest, MegabyteFrameNamesGiveABoundedGraph) {
  constexpr int kDepth = 240;
  v1::Profile p;
  p.set_sampling_interval_seconds(0.01);
  p.add_frames()->set_function(std::string(size_t{1} << 20, 'F'));
  for (int i = 0; i <= kDepth; ++i) {
    v1::ProfileNode* node = p.add_nodes();
    node->set_parent(i - 1);
    node->set_frame(i == 0 ? -1 : 0);
    node->set_count(kDepth - i + 1);
  }
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(p);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->drawn_frames, kDepth + 1);
  // A box: markup, a title of at most 400 characters and the text elided to its width.
  EXPECT_LT(graph->svg.size(), static_cast<size_t>(kDepth + 1) * 1024 + 16384);
  EXPECT_FALSE(absl::StrContains(graph->svg, std::string(401, 'F')));
}

TEST(FlameGraphTest, InconsistentProfileIsAnError) {
  v1::Profile bad = Tree({{0, "main", 3}, {1, "a", 5}});  // child above its parent
  EXPECT_FALSE(RenderFlameGraph(bad).ok());
}

}  // namespace
}  // namespace roastcoffea
