// A flame graph of one statistical profile (v1::Profile) as standalone SVG, written by the
// project (no flamegraph.pl, no plotting runtime).
//
// Layout: the classic one, root ("all") at the bottom and callees stacked above their
// callers; a frame's width is proportional to its inclusive samples, children are ordered by
// label and start at their parent's left edge. Identical frames are merged by their path of
// labels (profile/profile.h MergeProfiles), so "a;b" seen on several branches of the
// engine's tree is one box. Every drawn frame is a <g class="frame"> holding a <title>
// ("full label — N samples (P %, S s)", what a browser shows on hover), a <rect> and a <text>
// with the short label (no template arguments or parameters; profile/profile_frames.h)
// elided ("..") to the frame's width. Colours are warm, chosen from a hash of the short label
// (FNV-1a), so the same function has the same colour in every graph and every run.
//
// Size is bounded: frames narrower than `min_frame_width_px`, deeper than `max_depth`, or
// beyond the `max_frames` widest are not drawn; the graph says how many were hidden. With
// `search_script`, a small inline script adds a "Search" button (and Ctrl-F) that highlights
// the frames whose label matches a regular expression and shows the matched share; without
// JavaScript (or with the script off, as in the HTML report whose CSP forbids scripts) the
// hover titles still work. All text is XML-escaped.
//
// Thread-safety: pure functions. Cost: O(n log n) in the profile's nodes.
#ifndef ROASTCOFFEA_EXPORT_FLAME_GRAPH_H_
#define ROASTCOFFEA_EXPORT_FLAME_GRAPH_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct FlameGraphOptions {
  std::string title = "Flame graph";
  // A second line under the title (e.g. the worker); "" for none.
  std::string subtitle = {};
  int width = 1200;       // pixels, the whole image
  int frame_height = 16;  // pixels per stack level
  // Frames narrower than this are not drawn (nor their callees, which are narrower still).
  double min_frame_width_px = 0.1;
  // At most this many frames are drawn (the widest; a frame's callers always are).
  int max_frames = 20000;
  // Levels above this depth (the root is depth 0) are not drawn.
  int max_depth = 1000;
  bool search_script = true;
  // Keep the thread start-up, thread-pool and chunk-tracking frames below the chunk's
  // processor; by default they are collapsed (profile/profile_frames.h
  // CollapseWrapperFrames), so the graph starts at the processor.
  bool show_wrapper_frames = false;
};

struct FlameGraph {
  std::string svg;
  int64_t total_samples = 0;
  int64_t drawn_frames = 0;  // including the root
  // Frames with samples that were not drawn (too narrow, too deep, or over max_frames).
  int64_t hidden_frames = 0;
};

// The flame graph of `profile`. A profile without samples gives a small SVG saying
// "No samples". InvalidArgument (from the profile library) for an inconsistent profile.
absl::StatusOr<FlameGraph> RenderFlameGraph(const v1::Profile& profile,
                                            const FlameGraphOptions& options = {});

// The colour of a frame, "rgb(r,g,b)", from a stable hash of its label.
std::string FlameColor(const std::string& label);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_FLAME_GRAPH_H_
