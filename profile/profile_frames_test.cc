#include "profile/profile_frames.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;

TEST(ShortFunctionNameTest, DropsTemplateArgumentsParametersAndReturnType) {
  EXPECT_EQ(ShortFunctionName("double ns::A<int, std::vector<long> >::f(long) const"), "ns::A::f");
  EXPECT_EQ(ShortFunctionName("unsigned long roastcoffea::sample_analysis::(anonymous "
                              "namespace)::CountJets(roastcoffea::sample_analysis::Event const&)"),
            "roastcoffea::sample_analysis::(anon)::CountJets");
  EXPECT_EQ(ShortFunctionName("long& std::vector<long, std::allocator<long> >::emplace_back<long>"
                              "(long&&)"),
            "std::vector::emplace_back");
  EXPECT_EQ(ShortFunctionName("roastcoffea::X::Map(unsigned long) [clone .isra.0]"),
            "roastcoffea::X::Map");
  EXPECT_EQ(ShortFunctionName("std::basic_string<char>::_M_construct[abi:cxx11](char const*)"),
            "std::basic_string::_M_construct");
}

TEST(ShortFunctionNameTest, KeepsLambdasAndOperators) {
  EXPECT_EQ(ShortFunctionName("roastcoffea::Run(int)::{lambda(unsigned long)#2}::operator()"
                              "(unsigned long) const"),
            "roastcoffea::Run::{lambda#2}::operator()");
  EXPECT_EQ(ShortFunctionName("std::ostream& std::operator<< <std::char_traits<char> >"
                              "(std::ostream&, char const*)"),
            "std::operator<<");
  EXPECT_EQ(ShortFunctionName("bool ns::V::operator<(ns::V const&) const"), "ns::V::operator<");
  EXPECT_EQ(ShortFunctionName("ns::V::operator bool() const"), "ns::V::operator bool");
  EXPECT_EQ(ShortFunctionName("operator new(unsigned long)"), "operator new");
}

TEST(ShortFunctionNameTest, LeavesPlainNamesAlone) {
  EXPECT_EQ(ShortFunctionName("__sinh_finite"), "__sinh_finite");
  EXPECT_EQ(ShortFunctionName("??"), "??");
  EXPECT_EQ(ShortFunctionName("libzstd.so.1+0x1a2b0"), "libzstd.so.1+0x1a2b0");
  EXPECT_EQ(ShortFunctionName(""), "");
  EXPECT_EQ(ShortFunctionName("()"), "()");                    // nothing left: unchanged
  EXPECT_EQ(ShortFunctionName("f<int(long)"), "f<int(long)");  // unbalanced: unchanged
}

// Frames as Dask sends them (backends/dask/testdata/profile_*_reply.bin, captured by
// capture_profile.py): Python names that contain '<' must survive.
TEST(ShortFrameLabelTest, PythonFramesAreNotShortened) {
  v1::ProfileFrame hot;
  hot.set_function("burn_cpu_hot_loop");
  hot.set_file("/work/main/backends/dask/testdata/capture_profile.py");
  hot.set_line_number(34);
  hot.set_identifier("burn_cpu_hot_loop;/work/main/backends/dask/testdata/capture_profile.py;34");
  EXPECT_EQ(ShortFrameLabel(hot), FrameLabel(hot));
  v1::ProfileFrame lambda;
  lambda.set_function("<lambda>");
  lambda.set_file("distributed/worker.py");
  lambda.set_line_number(2990);
  EXPECT_EQ(ShortFrameLabel(lambda), "<lambda> (distributed/worker.py:2990)");
  v1::ProfileFrame listcomp;
  listcomp.set_function("<listcomp>");
  listcomp.set_file("analysis.py");
  EXPECT_EQ(ShortFrameLabel(listcomp), "<listcomp> (analysis.py)");
  EXPECT_FALSE(IsPlumbingFrame(lambda));
  EXPECT_FALSE(IsChunkWrapperFrame(hot));
}

TEST(ShortFrameLabelTest, CompiledFramesKeepTheirObject) {
  v1::ProfileFrame frame;
  frame.set_function("void ns::Fill<double>(double)");
  frame.set_file("collect");
  EXPECT_EQ(ShortFrameLabel(frame), "ns::Fill (collect)");
  EXPECT_EQ(FrameLabel(frame), "void ns::Fill<double>(double) (collect)");
}

TEST(ShortFrameLabelTest, HugeNamesAreCutAfterShortening) {
  v1::ProfileFrame frame;
  // Template arguments go first; what is left is still over the cut.
  frame.set_function(absl::StrCat("void ns::", std::string(3000, 'g'), "<int>(long)"));
  frame.set_file(std::string(2000, 'o'));
  EXPECT_EQ(ShortFrameLabel(frame),
            absl::StrCat("ns::", std::string(kMaxFrameNameBytes - 4, 'g'), "...[+1980 bytes] (",
                         std::string(kMaxFrameNameBytes, 'o'), "...[+976 bytes])"));
  frame.set_line_number(3);  // interpreted: FrameLabel, cut the same way
  EXPECT_EQ(ShortFrameLabel(frame), FrameLabel(frame));
  EXPECT_LT(FrameLabel(frame).size(), 2 * kMaxFrameNameBytes + 64);
}

TEST(ShortFrameLabelTest, StrippedLibraryFunctionsNameTheirObjectOnce) {
  v1::ProfileFrame frame;
  frame.set_function("libzstd.so.1+0x1a2b0");
  frame.set_file("libzstd.so.1");
  EXPECT_TRUE(IsUnnamedLibraryFunction(frame));
  EXPECT_EQ(ShortFrameLabel(frame), "libzstd.so.1+0x1a2b0");
  EXPECT_EQ(FrameLabel(frame), "libzstd.so.1+0x1a2b0 (libzstd.so.1)");
  EXPECT_FALSE(IsPlumbingFrame(frame));
  frame.set_function("libc.so.6+0x8a0c0");
  frame.set_file("libc.so.6");
  EXPECT_TRUE(IsPlumbingFrame(frame));  // a thread entry when it leads the stack
  frame.set_function("libc.so.6_helper");
  EXPECT_FALSE(IsUnnamedLibraryFunction(frame));
}

TEST(SectionFrameNameTest, RoundTrips) {
  EXPECT_EQ(SectionFrameName("dijet_mass"), "[section: dijet_mass]");
  EXPECT_TRUE(IsSectionFrameName(SectionFrameName("x")));
  EXPECT_FALSE(IsSectionFrameName("ns::f"));
}

// root -> frames[nodes[i].frame]...; helper building a profile from (parent, function, count).
struct Spec {
  int parent;
  std::string function;
  std::string file;
  int64_t count;
};

v1::Profile Build(const std::vector<Spec>& specs, int64_t root_count) {
  v1::Profile profile;
  profile.set_sampling_interval_seconds(0.01);
  v1::ProfileNode* root = profile.add_nodes();
  root->set_parent(-1);
  root->set_frame(-1);
  root->set_count(root_count);
  for (const Spec& spec : specs) {
    v1::ProfileFrame* frame = profile.add_frames();
    frame->set_function(spec.function);
    frame->set_file(spec.file);
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(spec.parent);
    node->set_frame(profile.frames_size() - 1);
    node->set_count(spec.count);
  }
  return profile;
}

std::vector<std::string> FoldedLines(const v1::Profile& profile) {
  absl::StatusOr<std::string> folded = FoldedStacks(profile);
  EXPECT_TRUE(folded.ok()) << folded.status();
  std::vector<std::string> lines;
  std::string line;
  for (char c : *folded) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line.push_back(c);
    }
  }
  return lines;
}

// The shape of a real threadpool stack (a `--profile` run of the sample analysis).
v1::Profile ThreadpoolLikeProfile() {
  return Build(
      {
          {0, "??", "libc.so.6", 10},                                              // 1 clone
          {1, "??", "libc.so.6", 10},                                              // 2 start_thread
          {2, "??", "libstdc++.so.6", 10},                                         // 3
          {3, "roastcoffea::ThreadPoolExecutor::WorkerLoop(int)", "collect", 10},  // 4
          {4,
           "roastcoffea::RunSampleAnalysis(int)::{lambda(unsigned long)#2}::operator()"
           "(unsigned long) const",
           "collect", 9},                                                                     // 5
          {5, "roastcoffea::instrumentation_internal::TrackChunkErased(int)", "collect", 9},  // 6
          {6,
           "roastcoffea::instrumentation_internal::ChunkTrackingProcessor<X>::Run<Y>(Z)::"
           "{lambda(void*)#2}::_FUN(void*)",
           "collect", 7},                                                      // 7
          {7, "ns::Processor::Process(ns::Item const&) const", "collect", 7},  // 8
          {8, "__sinh_finite", "libm.so.6", 4},                                // 9
          {6, "roastcoffea::instrumentation_internal::ReadResidentMemoryBytes()", "collect",
           1},                              // 10
          {0, "(truncated stack)", "", 2},  // 11
          {11, "??", "libzstd.so.1", 2},    // 12
      },
      12);
}

TEST(CollapseWrapperFramesTest, RootsStacksAtTheProcessor) {
  absl::StatusOr<v1::Profile> collapsed = CollapseWrapperFrames(ThreadpoolLikeProfile());
  ASSERT_TRUE(collapsed.ok()) << collapsed.status();
  EXPECT_THAT(FoldedLines(*collapsed),
              ElementsAre("(executor and wrappers) 2", "(truncated stack);?? (libzstd.so.1) 2",
                          "ns::Processor::Process(ns::Item const&) const (collect) 3",
                          "ns::Processor::Process(ns::Item const&) const (collect);"
                          "__sinh_finite (libm.so.6) 4",
                          "roastcoffea::instrumentation_internal::ReadResidentMemoryBytes() "
                          "(collect) 1"));
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(*collapsed);
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(analysis->total_samples, 12);
}

TEST(MaybeWrapperOrPlumbingTest, NeverMissesAWrapperOrPlumbingFrame) {
  const v1::Profile profile = ThreadpoolLikeProfile();
  int flagged = 0;
  for (const v1::ProfileFrame& frame : profile.frames()) {
    if (IsChunkWrapperFrame(frame) || IsPlumbingFrame(frame)) {
      ++flagged;
      EXPECT_TRUE(MaybeWrapperOrPlumbing(frame)) << frame.function();
    }
  }
  EXPECT_EQ(flagged, 7);
  v1::ProfileFrame user;
  user.set_function("double ns::Dijet<4>(ns::Jets const&)");
  EXPECT_FALSE(MaybeWrapperOrPlumbing(user));
  EXPECT_TRUE(HasWrapperFrames(profile));
  EXPECT_FALSE(HasWrapperFrames(Build({{0, "ns::f()", "a.out", 1}}, 1)));
}

TEST(CollapseWrapperFramesTest, LeavesPythonStacksAlone) {
  v1::Profile dask = Build({{0, "run", "threading.py", 5}, {1, "<lambda>", "analysis.py", 5}}, 5);
  dask.mutable_frames(0)->set_line_number(10);
  dask.mutable_frames(1)->set_line_number(3);
  absl::StatusOr<v1::Profile> collapsed = CollapseWrapperFrames(dask);
  ASSERT_TRUE(collapsed.ok());
  EXPECT_THAT(FoldedLines(*collapsed),
              ElementsAre("run (threading.py:10);<lambda> (analysis.py:3) 5"));
}

TEST(CollapseWrapperFramesTest, RefusesAnInconsistentProfile) {
  v1::Profile bad = Build({{0, "f", "", 5}, {1, "g", "", 9}}, 5);
  EXPECT_FALSE(CollapseWrapperFrames(bad).ok());
}

TEST(TruncatedStackSamplesTest, CountsTheMarkedStacks) {
  EXPECT_EQ(TruncatedStackSamples(ThreadpoolLikeProfile()), 2);
  EXPECT_EQ(TruncatedStackSamples(Build({{0, "f", "", 3}}, 3)), 0);
}

TEST(TopFunctionsTest, SelfAndCumulativeGroupedByShortName) {
  // f -> g -> f (recursion) and two instantiations of h.
  v1::Profile profile = Build(
      {
          {0, "f(int)", "a.out", 10},             // 1
          {1, "g()", "a.out", 6},                 // 2
          {2, "f(int)", "a.out", 4},              // 3
          {1, "void h<int>(int)", "a.out", 2},    // 4
          {0, "void h<long>(long)", "a.out", 3},  // 5
      },
      13);
  absl::StatusOr<std::vector<FunctionCost>> top = TopFunctions(profile, 10);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 3u);
  EXPECT_EQ((*top)[0].label, "f (a.out)");
  EXPECT_EQ((*top)[0].self_samples, 6);    // 2 in the outer f, 4 in the inner one
  EXPECT_EQ((*top)[0].total_samples, 10);  // recursion counted once
  EXPECT_EQ((*top)[0].full_label, "f(int) (a.out)");
  EXPECT_NEAR((*top)[0].total_percent, 100.0 * 10 / 13, 1e-9);
  EXPECT_NEAR((*top)[0].self_seconds, 0.06, 1e-12);
  EXPECT_EQ((*top)[1].label, "h (a.out)");
  EXPECT_EQ((*top)[1].self_samples, 5);
  EXPECT_EQ((*top)[1].total_samples, 5);
  EXPECT_EQ((*top)[2].label, "g (a.out)");
  EXPECT_EQ((*top)[2].self_samples, 2);
  EXPECT_EQ((*top)[2].total_samples, 6);
}

}  // namespace
}  // namespace roastcoffea
